package golangmigrator_test

import (
	"context"
	"os"
	"testing"
	"testing/fstest"
	"time"

	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/leakcheck"
	"github.com/twicekit/twicekit/internal/migration/migrationtest"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/pgfixture/golangmigrator"
)

func TestMain(m *testing.M) { leakcheck.Exit(pgfixture.Main(m)) }

func TestAppliesUpFilesOnly(t *testing.T) {
	t.Parallel()
	db := pgfixture.New(t, golangmigrator.New(os.DirFS("testdata/golangmigrate")))
	assert.Equal(t, []string{
		"customers(id bigint, email text)",
		"orders(id bigint, customer_id bigint, total numeric)",
		"schema_migrations(version bigint, dirty boolean)",
	}, migrationtest.Columns(t, db.Pool()), "the up files ran in order; no down file did (no down_ran table)")
	assert.Equal(t, "ann@example.com", migrationtest.Scalar[string](t, db.Pool(), "SELECT email FROM customers"))
	assert.Equal(t, "2 false", migrationtest.Scalar[string](t, db.Pool(), "SELECT version || ' ' || dirty FROM schema_migrations"))
}

func TestBrokenMigrationNamesFileAndPosition(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := pgfixture.Shared(ctx)
	require.NoError(t, err)
	_, err = srv.CreateDB(ctx, golangmigrator.New(os.DirFS("testdata/golangmigrate_broken")))
	require.EqualError(t, err, "golangmigrator: 000002_add_name.up.sql:3:21: ERROR: type \"txet\" does not exist (SQLSTATE 42704)\n"+
		"\t    ADD COLUMN name txet;\n"+
		"\t                    ^")
	_, err = srv.CreateDB(ctx, golangmigrator.New(fstest.MapFS{"001_init.sql": {Data: []byte("x")}}))
	require.EqualError(t, err, `golangmigrator: no up migrations (NNN_name.up.sql) at the root of the migrations FS`)
}

func TestHashes(t *testing.T) {
	t.Parallel()
	dir := func() fstest.MapFS {
		m := fstest.MapFS{}
		files, err := os.ReadDir("testdata/golangmigrate")
		require.NoError(t, err)
		for _, f := range files {
			b, err := os.ReadFile("testdata/golangmigrate/" + f.Name())
			require.NoError(t, err)
			m[f.Name()] = &fstest.MapFile{Data: b}
		}
		return m
	}
	m := golangmigrator.New(os.DirFS("testdata/golangmigrate"))
	assert.Equal(t, m.Hash(), golangmigrator.New(dir()).Hash())
	down := dir()
	down["000002_create_orders.down.sql"] = &fstest.MapFile{Data: []byte("DROP TABLE orders CASCADE;")}
	assert.Equal(t, m.Hash(), golangmigrator.New(down).Hash(), "down files are not applied, so not hashed")
	up := dir()
	up["000003_index.up.sql"] = &fstest.MapFile{Data: []byte("CREATE INDEX ON orders (customer_id);")}
	assert.NotEqual(t, m.Hash(), golangmigrator.New(up).Hash())
	assert.NotEqual(t, m.Hash(), pgfixture.FS(os.DirFS("testdata/golangmigrate")).Hash())
	assert.Len(t, m.Hash(), 64)
}

// TestOptionsPassThrough: the migrations in a subdirectory, recorded in a
// table of the app's choosing, as its own golang-migrate setup does.
func TestOptionsPassThrough(t *testing.T) {
	t.Parallel()
	db := pgfixture.New(t, golangmigrator.NewWithOptions(os.DirFS("testdata"), golangmigrator.Options{
		Path:     "golangmigrate",
		Database: &migratepgx.Config{MigrationsTable: "app_migrations"},
	}))
	assert.Equal(t, []string{
		"app_migrations(version bigint, dirty boolean)",
		"customers(id bigint, email text)",
		"orders(id bigint, customer_id bigint, total numeric)",
	}, migrationtest.Columns(t, db.Pool()))
}

func TestOptionsAreHashed(t *testing.T) {
	t.Parallel()
	plain := golangmigrator.New(os.DirFS("testdata/golangmigrate")).Hash()
	assert.Equal(t, plain, golangmigrator.NewWithOptions(os.DirFS("testdata/golangmigrate"), golangmigrator.Options{}).Hash(), "no options: New's hash")
	assert.NotEqual(t, plain, golangmigrator.NewWithOptions(os.DirFS("testdata"), golangmigrator.Options{Path: "golangmigrate"}).Hash(), "the path is part of the key")
	assert.NotEqual(t, plain, golangmigrator.NewWithOptions(os.DirFS("testdata/golangmigrate"),
		golangmigrator.Options{Database: &migratepgx.Config{MigrationsTable: "app_migrations"}}).Hash())
	assert.Equal(t,
		golangmigrator.NewWithOptions(os.DirFS("testdata/golangmigrate"), golangmigrator.Options{Database: &migratepgx.Config{StatementTimeout: time.Second}}).Hash(),
		golangmigrator.NewWithOptions(os.DirFS("testdata/golangmigrate"), golangmigrator.Options{Database: &migratepgx.Config{StatementTimeout: time.Minute}}).Hash(),
		"a statement timeout changes nothing the template holds")
}
