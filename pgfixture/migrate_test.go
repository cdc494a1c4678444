package pgfixture

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// addNames is a goose Go migration (version 3): it adds a column and a row.
func addNames() *goose.Migration {
	return goose.NewGoMigration(3,
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `ALTER TABLE customers ADD COLUMN name text;
				INSERT INTO customers (email, name) VALUES ('ann@example.com', 'Ann')`)
			return err
		}},
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `CREATE TABLE down_ran (version int); ALTER TABLE customers DROP COLUMN name`)
			return err
		}})
}

// columns lists every table of the public schema with its columns and
// types, in order: "customers(id bigint, email text)".
func columns(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT c.table_name || '(' || string_agg(c.column_name || ' ' || c.data_type, ', ' ORDER BY c.ordinal_position) || ')'
		FROM information_schema.columns c
		JOIN information_schema.tables t USING (table_schema, table_name)
		WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
		GROUP BY c.table_name ORDER BY c.table_name`)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

func TestGooseAppliesUpSectionsAndGoMigrations(t *testing.T) {
	t.Parallel()
	db := New(t, Goose(os.DirFS("testdata/goose"), addNames()))
	assert.Equal(t, []string{
		"customers(id bigint, email text, name text)",
		"goose_db_version(id integer, version_id bigint, is_applied boolean, tstamp timestamp without time zone)",
		"orders(id bigint, customer_id bigint, total numeric)",
	}, columns(t, db.Pool()), "Up sections and the Go migration ran; no Down section did (no down_ran table)")
	assert.Equal(t, "Ann <ann@example.com>", scalar[string](t, db.Pool(), "SELECT name || ' <' || email || '>' FROM customers"))
	assert.Equal(t, "0 1 2 3", scalar[string](t, db.Pool(), "SELECT string_agg(version_id::text, ' ' ORDER BY version_id) FROM goose_db_version WHERE is_applied"))
	assert.Equal(t, 1, scalar[int](t, db.Pool(), "SELECT count(*) FROM pg_proc WHERE proname = 'order_total'"), "a StatementBegin/End block ran")
}

func TestGolangMigrateAppliesUpFilesOnly(t *testing.T) {
	t.Parallel()
	db := New(t, GolangMigrate(os.DirFS("testdata/golangmigrate")))
	assert.Equal(t, []string{
		"customers(id bigint, email text)",
		"orders(id bigint, customer_id bigint, total numeric)",
		"schema_migrations(version bigint, dirty boolean)",
	}, columns(t, db.Pool()), "the up files ran in order; no down file did (no down_ran table)")
	assert.Equal(t, "ann@example.com", scalar[string](t, db.Pool(), "SELECT email FROM customers"))
	assert.Equal(t, "2 false", scalar[string](t, db.Pool(), "SELECT version || ' ' || dirty FROM schema_migrations"))
}

func TestFSRefusesOtherToolsDirectories(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := sharedT(t)
	_, err := srv.CreateDB(ctx, FS(os.DirFS("testdata/goose")))
	require.EqualError(t, err, `pgfixture: migrations look like goose's (00001_create_customers.sql has "-- +goose Up"): use pgfixture.Goose(fsys), which applies only the Up sections`)
	_, err = srv.CreateDB(ctx, FS(os.DirFS("testdata/golangmigrate")))
	require.EqualError(t, err, `pgfixture: migrations look like golang-migrate's (000001_create_customers.down.sql is a down migration): use pgfixture.GolangMigrate(fsys), which applies only the *.up.sql files, in order`)
	_, err = srv.CreateDB(ctx, FS(fstest.MapFS{"1_init.up.sql": {Data: []byte("CREATE TABLE a ();")}}))
	require.EqualError(t, err, `pgfixture: migrations look like golang-migrate's (1_init.up.sql is an up migration): use pgfixture.GolangMigrate(fsys), which applies only the *.up.sql files, in order`)
	// Through Migrations too, and New says it through Fatalf.
	ftb := &fakeTB{name: "TestX"}
	ftb.run(func() { New(ftb, Migrations(SQL("CREATE TABLE a ();"), FS(os.DirFS("testdata/goose")))) })
	assert.True(t, ftb.failed)
	assert.Contains(t, strings.Join(ftb.logs, "\n"), `pgfixture: migrations look like goose's (00001_create_customers.sql has "-- +goose Up")`)
}

func TestMigrationsComposeSQLAndGoose(t *testing.T) {
	t.Parallel()
	schema := Migrations(
		SQL("CREATE TABLE settings (key text PRIMARY KEY, value text NOT NULL)"),
		Goose(os.DirFS("testdata/goose"), addNames()),
		SQL("INSERT INTO settings SELECT 'customers', count(*)::text FROM customers"),
	)
	db := New(t, schema)
	assert.Equal(t, []string{
		"customers(id bigint, email text, name text)",
		"goose_db_version(id integer, version_id bigint, is_applied boolean, tstamp timestamp without time zone)",
		"orders(id bigint, customer_id bigint, total numeric)",
		"settings(key text, value text)",
	}, columns(t, db.Pool()))
	assert.Equal(t, "1", scalar[string](t, db.Pool(), "SELECT value FROM settings WHERE key = 'customers'"), "the last SQL ran after goose")
}

func TestBrokenGooseMigrationNamesFile(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := sharedT(t)
	_, err := srv.CreateDB(ctx, Goose(os.DirFS("testdata/goose_broken")))
	require.EqualError(t, err, "pgfixture: 00002_add_name.sql:2:39: ERROR: type \"txet\" does not exist (SQLSTATE 42704)\n"+
		"\tALTER TABLE customers ADD COLUMN name txet;\n"+
		"\t                                      ^")

	fail := goose.NewGoMigration(7, &goose.GoFunc{RunTx: func(context.Context, *sql.Tx) error {
		return errors.New("no backfill source")
	}}, nil)
	_, err = srv.CreateDB(ctx, Goose(nil, fail))
	require.EqualError(t, err, `pgfixture: goose Go migration 7 failed: no backfill source`)

	// What goose cannot read fails before any database is made.
	_, err = srv.CreateDB(ctx, Goose(fstest.MapFS{"README.md": {Data: []byte("x")}}))
	require.EqualError(t, err, `pgfixture: goose: no migrations found`)
}

func TestBrokenGolangMigrateMigrationNamesFileAndPosition(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := sharedT(t)
	_, err := srv.CreateDB(ctx, GolangMigrate(os.DirFS("testdata/golangmigrate_broken")))
	require.EqualError(t, err, "pgfixture: 000002_add_name.up.sql:3:21: ERROR: type \"txet\" does not exist (SQLSTATE 42704)\n"+
		"\t    ADD COLUMN name txet;\n"+
		"\t                    ^")
	_, err = srv.CreateDB(ctx, GolangMigrate(fstest.MapFS{"001_init.sql": {Data: []byte("x")}}))
	require.EqualError(t, err, `pgfixture: golang-migrate: no up migrations (NNN_name.up.sql) at the root of the migrations FS`)
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
	db, err := openSQL(url)
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
	dir := func(name string) fstest.MapFS {
		m := fstest.MapFS{}
		files, err := os.ReadDir("testdata/" + name)
		require.NoError(t, err)
		for _, f := range files {
			b, err := os.ReadFile("testdata/" + name + "/" + f.Name())
			require.NoError(t, err)
			m[f.Name()] = &fstest.MapFile{Data: b}
		}
		return m
	}
	g := Goose(os.DirFS("testdata/goose"), addNames())
	assert.Equal(t, g.Hash(), Goose(dir("goose"), addNames()).Hash(), "same content, same hash")
	assert.NotEqual(t, g.Hash(), Goose(os.DirFS("testdata/goose")).Hash(), "without the Go migration")
	changed := dir("goose")
	changed["00002_create_orders.sql"] = &fstest.MapFile{Data: append([]byte("-- v2\n"), changed["00002_create_orders.sql"].Data...)}
	assert.NotEqual(t, g.Hash(), Goose(changed, addNames()).Hash(), "changed content, new hash")
	readme := dir("goose")
	readme["README.md"] = &fstest.MapFile{Data: []byte("other")}
	assert.Equal(t, g.Hash(), Goose(readme, addNames()).Hash(), "a file goose ignores is not hashed")

	m := GolangMigrate(os.DirFS("testdata/golangmigrate"))
	assert.Equal(t, m.Hash(), GolangMigrate(dir("golangmigrate")).Hash())
	down := dir("golangmigrate")
	down["000002_create_orders.down.sql"] = &fstest.MapFile{Data: []byte("DROP TABLE orders CASCADE;")}
	assert.Equal(t, m.Hash(), GolangMigrate(down).Hash(), "down files are not applied, so not hashed")
	up := dir("golangmigrate")
	up["000003_index.up.sql"] = &fstest.MapFile{Data: []byte("CREATE INDEX ON orders (customer_id);")}
	assert.NotEqual(t, m.Hash(), GolangMigrate(up).Hash())

	a := Migrations(SQL("CREATE TABLE a ()"), g)
	assert.Equal(t, a.Hash(), Migrations(SQL("CREATE TABLE a ()"), Goose(dir("goose"), addNames())).Hash())
	assert.NotEqual(t, a.Hash(), Migrations(g, SQL("CREATE TABLE a ()")).Hash(), "order counts")
	assert.NotEqual(t, a.Hash(), Migrations(SQL("CREATE TABLE b ()"), g).Hash())
	assert.Equal(t, SQL("x").Hash(), Migrations(SQL("x")).Hash(), "one migrator: its own hash")
	assert.Equal(t, a.Hash(), Migrations(Migrations(SQL("CREATE TABLE a ()")), Migrations(g)).Hash(), "nested schemas flatten")
	assert.NotEqual(t, g.Hash(), m.Hash())
	assert.Len(t, g.Hash(), 64)
}

// TestMigratorTemplatesAreCached: a second database of the same goose
// schema is cloned from the template, not migrated again.
func TestMigratorTemplatesAreCached(t *testing.T) {
	t.Parallel()
	runs := 0
	once := goose.NewGoMigration(41, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		runs++
		_, err := tx.ExecContext(ctx, "CREATE TABLE cached (id int)")
		return err
	}}, nil)
	schema := Goose(nil, once)
	New(t, schema)
	New(t, schema)
	assert.Equal(t, 1, runs)
}

// TestGooseGlobalRegistry: Go migrations registered in goose's global
// registry (as a migrations package's init functions do) run too, here one
// outside a transaction. Not parallel: the registry is global.
func TestGooseGlobalRegistry(t *testing.T) {
	goose.AddNamedMigrationNoTxContext("00003_add_names.go",
		func(ctx context.Context, db *sql.DB) error {
			_, err := db.ExecContext(ctx, `ALTER TABLE customers ADD COLUMN name text;
				INSERT INTO customers (email, name) VALUES ('bob@example.com', 'Bob')`)
			return err
		},
		func(ctx context.Context, db *sql.DB) error {
			_, err := db.ExecContext(ctx, `CREATE TABLE down_ran (version int)`)
			return err
		})
	t.Cleanup(goose.ResetGlobalMigrations)
	schema := Goose(os.DirFS("testdata/goose"))
	assert.NotEqual(t, Goose(os.DirFS("testdata/goose"), addNames()).Hash(), schema.Hash(), "the Go migration's file name is hashed")
	db := New(t, schema)
	assert.Equal(t, []string{
		"customers(id bigint, email text, name text)",
		"goose_db_version(id integer, version_id bigint, is_applied boolean, tstamp timestamp without time zone)",
		"orders(id bigint, customer_id bigint, total numeric)",
	}, columns(t, db.Pool()))
	assert.Equal(t, "Bob <bob@example.com>", scalar[string](t, db.Pool(), "SELECT name || ' <' || email || '>' FROM customers"))
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
