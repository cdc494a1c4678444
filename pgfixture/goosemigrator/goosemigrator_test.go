package goosemigrator_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/leakcheck"
	"github.com/twicekit/twicekit/internal/migration/migrationtest"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/pgfixture/goosemigrator"
)

func TestMain(m *testing.M) { leakcheck.Exit(pgfixture.Main(m)) }

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

func server(t *testing.T) (context.Context, *pgfixture.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	srv, err := pgfixture.Shared(ctx)
	require.NoError(t, err)
	return ctx, srv
}

func TestAppliesUpSectionsAndGoMigrations(t *testing.T) {
	t.Parallel()
	db := pgfixture.New(t, goosemigrator.New(os.DirFS("testdata/goose"), addNames()))
	assert.Equal(t, []string{
		"customers(id bigint, email text, name text)",
		"goose_db_version(id integer, version_id bigint, is_applied boolean, tstamp timestamp without time zone)",
		"orders(id bigint, customer_id bigint, total numeric)",
	}, migrationtest.Columns(t, db.Pool()), "Up sections and the Go migration ran; no Down section did (no down_ran table)")
	assert.Equal(t, "Ann <ann@example.com>", migrationtest.Scalar[string](t, db.Pool(), "SELECT name || ' <' || email || '>' FROM customers"))
	assert.Equal(t, "0 1 2 3", migrationtest.Scalar[string](t, db.Pool(), "SELECT string_agg(version_id::text, ' ' ORDER BY version_id) FROM goose_db_version WHERE is_applied"))
	assert.Equal(t, 1, migrationtest.Scalar[int](t, db.Pool(), "SELECT count(*) FROM pg_proc WHERE proname = 'order_total'"), "a StatementBegin/End block ran")
}

func TestComposesWithSQL(t *testing.T) {
	t.Parallel()
	schema := pgfixture.Migrations(
		pgfixture.SQL("CREATE TABLE settings (key text PRIMARY KEY, value text NOT NULL)"),
		goosemigrator.New(os.DirFS("testdata/goose"), addNames()),
		pgfixture.SQL("INSERT INTO settings SELECT 'customers', count(*)::text FROM customers"),
	)
	db := pgfixture.New(t, schema)
	assert.Equal(t, []string{
		"customers(id bigint, email text, name text)",
		"goose_db_version(id integer, version_id bigint, is_applied boolean, tstamp timestamp without time zone)",
		"orders(id bigint, customer_id bigint, total numeric)",
		"settings(key text, value text)",
	}, migrationtest.Columns(t, db.Pool()))
	assert.Equal(t, "1", migrationtest.Scalar[string](t, db.Pool(), "SELECT value FROM settings WHERE key = 'customers'"), "the last SQL ran after goose")
}

func TestBrokenMigrationNamesFile(t *testing.T) {
	t.Parallel()
	ctx, srv := server(t)
	_, err := srv.CreateDB(ctx, goosemigrator.New(os.DirFS("testdata/goose_broken")))
	require.EqualError(t, err, "goosemigrator: 00002_add_name.sql:2:39: ERROR: type \"txet\" does not exist (SQLSTATE 42704)\n"+
		"\tALTER TABLE customers ADD COLUMN name txet;\n"+
		"\t                                      ^")

	fail := goose.NewGoMigration(7, &goose.GoFunc{RunTx: func(context.Context, *sql.Tx) error {
		return errors.New("no backfill source")
	}}, nil)
	_, err = srv.CreateDB(ctx, goosemigrator.New(nil, fail))
	require.EqualError(t, err, `goosemigrator: Go migration 7 failed: no backfill source`)

	// What goose cannot read fails before any database is made.
	_, err = srv.CreateDB(ctx, goosemigrator.New(fstest.MapFS{"README.md": {Data: []byte("x")}}))
	require.EqualError(t, err, `goosemigrator: no migrations found`)
}

func dir(t *testing.T, name string) fstest.MapFS {
	t.Helper()
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

func TestHashes(t *testing.T) {
	t.Parallel()
	g := goosemigrator.New(os.DirFS("testdata/goose"), addNames())
	assert.Equal(t, g.Hash(), goosemigrator.New(dir(t, "goose"), addNames()).Hash(), "same content, same hash")
	assert.NotEqual(t, g.Hash(), goosemigrator.New(os.DirFS("testdata/goose")).Hash(), "without the Go migration")
	changed := dir(t, "goose")
	changed["00002_create_orders.sql"] = &fstest.MapFile{Data: append([]byte("-- v2\n"), changed["00002_create_orders.sql"].Data...)}
	assert.NotEqual(t, g.Hash(), goosemigrator.New(changed, addNames()).Hash(), "changed content, new hash")
	readme := dir(t, "goose")
	readme["README.md"] = &fstest.MapFile{Data: []byte("other")}
	assert.Equal(t, g.Hash(), goosemigrator.New(readme, addNames()).Hash(), "a file goose ignores is not hashed")

	a := pgfixture.Migrations(pgfixture.SQL("CREATE TABLE a ()"), g)
	assert.Equal(t, a.Hash(), pgfixture.Migrations(pgfixture.SQL("CREATE TABLE a ()"), goosemigrator.New(dir(t, "goose"), addNames())).Hash())
	assert.NotEqual(t, a.Hash(), pgfixture.Migrations(g, pgfixture.SQL("CREATE TABLE a ()")).Hash(), "order counts")
	assert.NotEqual(t, a.Hash(), pgfixture.Migrations(pgfixture.SQL("CREATE TABLE b ()"), g).Hash())
	assert.Equal(t, a.Hash(), pgfixture.Migrations(pgfixture.Migrations(pgfixture.SQL("CREATE TABLE a ()")), pgfixture.Migrations(g)).Hash(), "nested schemas flatten")
	assert.Len(t, g.Hash(), 64)
}

// TestTemplatesAreCached: a second database of the same goose schema is
// cloned from the template, not migrated again.
func TestTemplatesAreCached(t *testing.T) {
	t.Parallel()
	runs := 0
	once := goose.NewGoMigration(41, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		runs++
		_, err := tx.ExecContext(ctx, "CREATE TABLE cached (id int)")
		return err
	}}, nil)
	schema := goosemigrator.New(nil, once)
	pgfixture.New(t, schema)
	pgfixture.New(t, schema)
	assert.Equal(t, 1, runs)
}

// TestGlobalRegistry: Go migrations registered in goose's global registry
// (as a migrations package's init functions do) run too, here one outside
// a transaction. Not parallel: the registry is global.
func TestGlobalRegistry(t *testing.T) {
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
	schema := goosemigrator.New(os.DirFS("testdata/goose"))
	assert.NotEqual(t, goosemigrator.New(os.DirFS("testdata/goose"), addNames()).Hash(), schema.Hash(), "the Go migration's file name is hashed")
	db := pgfixture.New(t, schema)
	assert.Equal(t, []string{
		"customers(id bigint, email text, name text)",
		"goose_db_version(id integer, version_id bigint, is_applied boolean, tstamp timestamp without time zone)",
		"orders(id bigint, customer_id bigint, total numeric)",
	}, migrationtest.Columns(t, db.Pool()))
	assert.Equal(t, "Bob <bob@example.com>", migrationtest.Scalar[string](t, db.Pool(), "SELECT name || ' <' || email || '>' FROM customers"))
}

// TestTwoDirectoriesIntoOneVersionTable: an app that migrates a second
// directory into the same version table needs goose's allow-missing
// (out of order) option, and gets it through Options.
func TestTwoDirectoriesIntoOneVersionTable(t *testing.T) {
	t.Parallel()
	ctx, srv := server(t)
	_, err := srv.CreateDB(ctx, pgfixture.Migrations(
		goosemigrator.New(os.DirFS("testdata/two/app")),
		goosemigrator.New(os.DirFS("testdata/two/billing"))))
	require.Error(t, err, "without the option goose refuses version 2 below the applied 3")
	assert.Contains(t, err.Error(), "missing")

	db := pgfixture.New(t, pgfixture.Migrations(
		goosemigrator.NewWithOptions(os.DirFS("testdata/two/app"), goosemigrator.Options{TableName: "app_versions"}),
		goosemigrator.NewWithOptions(os.DirFS("testdata/two/billing"), goosemigrator.Options{TableName: "app_versions", AllowMissing: true})))
	assert.Equal(t, []string{
		"app_versions(id integer, version_id bigint, is_applied boolean, tstamp timestamp without time zone)",
		"customers(id bigint)",
		"invoices(id bigint, customer_id bigint)",
		"orders(id bigint, customer_id bigint)",
	}, migrationtest.Columns(t, db.Pool()))
	assert.Equal(t, "0 1 3 2", migrationtest.Scalar[string](t, db.Pool(), "SELECT string_agg(version_id::text, ' ' ORDER BY id) FROM app_versions"))
}

func TestOptionsAreHashed(t *testing.T) {
	t.Parallel()
	app := os.DirFS("testdata/two/app")
	plain := goosemigrator.New(app).Hash()
	assert.Equal(t, plain, goosemigrator.NewWithOptions(app, goosemigrator.Options{}).Hash(), "no options: New's hash")
	assert.NotEqual(t, plain, goosemigrator.NewWithOptions(app, goosemigrator.Options{TableName: "v"}).Hash())
	assert.NotEqual(t, plain, goosemigrator.NewWithOptions(app, goosemigrator.Options{AllowMissing: true}).Hash())
	assert.NotEqual(t, plain, goosemigrator.NewWithOptions(app, goosemigrator.Options{Key: "store v2"}).Hash())
	excluded := goosemigrator.NewWithOptions(app, goosemigrator.Options{Provider: []goose.ProviderOption{goose.WithExcludeVersions([]int64{3})}}).Hash()
	assert.NotEqual(t, plain, excluded, "an excluded migration is not listed, so the hash changes")
}
