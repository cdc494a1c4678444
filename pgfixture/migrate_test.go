package pgfixture

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/migration"
)

func TestFSRefusesOtherToolsDirectories(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := sharedT(t)
	_, err := srv.CreateDB(ctx, FS(os.DirFS("goosemigrator/testdata/goose")))
	require.EqualError(t, err, `pgfixture: migrations look like goose's (00001_create_customers.sql has "-- +goose Up"): use goosemigrator.New(fsys) (package github.com/twicekit/twicekit/pgfixture/goosemigrator), which applies only the Up sections`)
	_, err = srv.CreateDB(ctx, FS(os.DirFS("golangmigrator/testdata/golangmigrate")))
	require.EqualError(t, err, `pgfixture: migrations look like golang-migrate's (000001_create_customers.down.sql is a down migration): use golangmigrator.New(fsys) (package github.com/twicekit/twicekit/pgfixture/golangmigrator), which applies only the *.up.sql files, in order`)
	_, err = srv.CreateDB(ctx, FS(fstest.MapFS{"1_init.up.sql": {Data: []byte("CREATE TABLE a ();")}}))
	require.EqualError(t, err, `pgfixture: migrations look like golang-migrate's (1_init.up.sql is an up migration): use golangmigrator.New(fsys) (package github.com/twicekit/twicekit/pgfixture/golangmigrator), which applies only the *.up.sql files, in order`)
	// Through Migrations too, and New says it through Fatalf.
	ftb := &fakeTB{name: "TestX"}
	ftb.run(func() { New(ftb, Migrations(SQL("CREATE TABLE a ();"), FS(os.DirFS("goosemigrator/testdata/goose")))) })
	assert.True(t, ftb.failed)
	assert.Contains(t, strings.Join(ftb.logs, "\n"), `pgfixture: migrations look like goose's (00001_create_customers.sql has "-- +goose Up")`)
}

// countingMigrator is a migrator of the caller's own.
type countingMigrator struct {
	version string
	err     error
}

func (m countingMigrator) Hash() string { return "counting " + m.version }
func (m countingMigrator) Migrate(ctx context.Context, url string) error {
	if m.err != nil {
		return m.err
	}
	db, err := migration.OpenSQL(url)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, "CREATE TABLE counter (n int); INSERT INTO counter VALUES (1)")
	return err
}

func TestCustomMigrator(t *testing.T) {
	t.Parallel()
	db := New(t, Migrations(countingMigrator{version: "1"}, SQL("UPDATE counter SET n = n + 1")))
	assert.Equal(t, 2, scalar[int](t, db.Pool(), "SELECT n FROM counter"))

	_, err := sharedT(t).CreateDB(ctxT(t), Migrations(SQL("SELECT 1"), countingMigrator{version: "2", err: errors.New("boom")}))
	require.EqualError(t, err, "pgfixture: migrator 2 of 2 (pgfixture.countingMigrator) failed: boom")
	_, err = sharedT(t).CreateDB(ctxT(t), Migrations(SQL("SELECT 1"), nil))
	require.EqualError(t, err, "pgfixture: Migrations: migrator 2 is nil")
}

func TestMigratorHashes(t *testing.T) {
	t.Parallel()
	c := countingMigrator{version: "1"}
	a := Migrations(SQL("CREATE TABLE a ()"), c)
	assert.Equal(t, a.Hash(), Migrations(SQL("CREATE TABLE a ()"), countingMigrator{version: "1"}).Hash())
	assert.NotEqual(t, a.Hash(), Migrations(c, SQL("CREATE TABLE a ()")).Hash(), "order counts")
	assert.NotEqual(t, a.Hash(), Migrations(SQL("CREATE TABLE b ()"), c).Hash())
	assert.NotEqual(t, a.Hash(), Migrations(SQL("CREATE TABLE a ()"), countingMigrator{version: "2"}).Hash())
	assert.Equal(t, SQL("x").Hash(), Migrations(SQL("x")).Hash(), "one migrator: its own hash")
	assert.Equal(t, a.Hash(), Migrations(Migrations(SQL("CREATE TABLE a ()")), Migrations(c)).Hash(), "nested schemas flatten")
	assert.Len(t, a.Hash(), 64)
}

func TestDatabaseURL(t *testing.T) {
	t.Parallel()
	srv := func(dsn string) *Server {
		cfg, err := pgx.ParseConfig(dsn)
		require.NoError(t, err)
		return &Server{adminDSN: dsn, adminCfg: cfg}
	}
	assert.Equal(t, "postgres://ann:s%20cret@db.example:6543/twicekit_t_1?application_name=ci&sslmode=verify-full",
		srv("postgres://ann:s%20cret@db.example:6543/postgres?sslmode=verify-full&application_name=ci&dbname=other").databaseURL("twicekit_t_1"))
	assert.Equal(t, "postgres://postgres@127.0.0.1:5433/twicekit_t_1?sslmode=disable",
		srv("host=127.0.0.1 port=5433 user=postgres dbname=postgres sslmode=disable").databaseURL("twicekit_t_1"))
	assert.Equal(t, "postgres://bob:pw@/twicekit_t_1?host=%2Ftmp%2Fpg&port=5432&sslmode=disable",
		srv("host=/tmp/pg user=bob password=pw dbname=postgres sslmode=disable").databaseURL("twicekit_t_1"))
}

// TestDatabaseConfigNamesTheDatabase: the connection settings a database
// hands out parse from a string that names it, so ConnString() (what a job
// that builds its own pool reads) never names the maintenance database;
// every other setting stays as the server was given it.
func TestDatabaseConfigNamesTheDatabase(t *testing.T) {
	t.Parallel()
	srv := func(dsn string) *Server {
		cfg, err := pgx.ParseConfig(dsn)
		require.NoError(t, err)
		return &Server{adminDSN: dsn, adminCfg: cfg}
	}
	for _, dsn := range []string{
		"host=127.0.0.1 port=5433 user=postgres dbname=postgres sslmode=disable",
		"postgres://ann:s%20cret@db.example:6543/postgres?sslmode=disable&application_name=ci",
		"host=/tmp/pg user=bob password='p w' dbname=postgres sslmode=disable",
	} {
		cfg := srv(dsn).databaseConfig("twicekit_f1_ab'c")
		assert.Equal(t, "twicekit_f1_ab'c", cfg.Database, dsn)
		again, err := pgx.ParseConfig(cfg.ConnString())
		require.NoError(t, err, dsn)
		assert.Equal(t, "twicekit_f1_ab'c", again.Database, dsn)
		assert.Equal(t, srv(dsn).adminCfg.Password, again.Password, dsn)
		assert.Equal(t, srv(dsn).adminCfg.Host, again.Host, dsn)
	}
}

func TestADatabasesConnStringNamesIt(t *testing.T) {
	t.Parallel()
	db := New(t, shopSchema)
	cfg, err := pgx.ParseConfig(db.ConnConfig().ConnString())
	require.NoError(t, err)
	assert.Equal(t, db.Name(), cfg.Database)
	conn, err := pgx.Connect(t.Context(), db.ConnConfig().ConnString())
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var name string
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT current_database()").Scan(&name))
	assert.Equal(t, db.Name(), name)
}
