package ternmigrator_test

import (
	"context"
	"os"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/leakcheck"
	"github.com/twicekit/twicekit/internal/migration/migrationtest"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/pgfixture/ternmigrator"
)

func TestMain(m *testing.M) { leakcheck.Exit(pgfixture.Main(m)) }

func server(t *testing.T) (context.Context, *pgfixture.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	srv, err := pgfixture.Shared(ctx)
	require.NoError(t, err)
	return ctx, srv
}

// TestAppliesCreateSectionsOnly: tern runs the part above the separator,
// evaluates the shared template, and the unique constraint migration 003
// dropped stays dropped (a tool running the drop sections, as pgfixture.FS
// would, re-adds it).
func TestAppliesCreateSectionsOnly(t *testing.T) {
	t.Parallel()
	db := pgfixture.New(t, ternmigrator.New(os.DirFS("testdata/tern")))
	assert.Equal(t, []string{
		"customers(id bigint, email text)",
		"orders(id bigint, customer_id bigint, total numeric)",
		"schema_version(version integer)",
	}, migrationtest.Columns(t, db.Pool()), "no drop section ran (no down_ran table)")
	assert.Equal(t, 3, migrationtest.Scalar[int](t, db.Pool(), "SELECT version FROM schema_version"))
	assert.Equal(t, 0, migrationtest.Scalar[int](t, db.Pool(), "SELECT count(*) FROM pg_constraint WHERE conname = 'customers_email_key'"),
		"003 dropped the constraint and nothing re-added it")
	assert.Equal(t, 1, migrationtest.Scalar[int](t, db.Pool(), "SELECT count(*) FROM pg_proc WHERE proname = 'order_total'"), "the shared template was evaluated")
}

// TestFSRefusesTernNamingThisModule: the same directory through
// pgfixture.FS fails naming this migrator, before any database is made.
func TestFSRefusesTernNamingThisModule(t *testing.T) {
	t.Parallel()
	ctx, srv := server(t)
	_, err := srv.CreateDB(ctx, pgfixture.FS(os.DirFS("testdata/tern")))
	require.EqualError(t, err, `pgfixture: migrations look like tern's (001_create_customers.sql has "---- create above / drop below ----", and FS would run its drop section): use ternmigrator.New(fsys) (module github.com/twicekit/twicekit/pgfixture/ternmigrator), which applies only the create sections, through tern`)
	_, err = srv.CreateDB(ctx, pgfixture.FS(fstest.MapFS{"001_a.sql": {Data: []byte(`{{ template "shared/a.sql" . }}`)}}))
	require.EqualError(t, err, `pgfixture: migrations look like tern's (001_a.sql has the template action "{{ template", which FS would send as SQL): use ternmigrator.New(fsys) (module github.com/twicekit/twicekit/pgfixture/ternmigrator), which evaluates tern's templates`)
}

func TestOptions(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"001_settings.sql": {Data: []byte(`CREATE TABLE {{.prefix}}settings (key text PRIMARY KEY);`)}}
	db := pgfixture.New(t, ternmigrator.NewWithOptions(fsys, ternmigrator.Options{
		VersionTable: "public.tern_version", Data: map[string]any{"prefix": "app_"}, DisableTx: true,
	}))
	assert.Equal(t, []string{"app_settings(key text)", "tern_version(version integer)"}, migrationtest.Columns(t, db.Pool()))
}

func TestBrokenMigrationNamesFile(t *testing.T) {
	t.Parallel()
	ctx, srv := server(t)
	_, err := srv.CreateDB(ctx, ternmigrator.New(os.DirFS("testdata/tern_broken")))
	require.EqualError(t, err, "ternmigrator: 002_typo.sql:3:8: ERROR: type \"txet\" does not exist (SQLSTATE 42704)\n"+
		"\t  name txet\n"+
		"\t       ^")

	// What tern cannot read fails before any database is made.
	_, err = srv.CreateDB(ctx, ternmigrator.New(fstest.MapFS{"001_a.sql": {Data: []byte("SELECT 1")}, "003_c.sql": {Data: []byte("SELECT 1")}}))
	require.EqualError(t, err, `ternmigrator: Missing migration 2`)
	_, err = srv.CreateDB(ctx, ternmigrator.New(fstest.MapFS{"README.md": {Data: []byte("x")}}))
	require.EqualError(t, err, `ternmigrator: migrations not found`)
}

func TestHashes(t *testing.T) {
	t.Parallel()
	fsys := func(sql string) fstest.MapFS {
		return fstest.MapFS{"001_a.sql": {Data: []byte(sql)}, "README.md": {Data: []byte("ignored")}}
	}
	a := ternmigrator.New(fsys("CREATE TABLE a ();"))
	assert.Equal(t, a.Hash(), ternmigrator.New(fsys("CREATE TABLE a ();")).Hash(), "same content, same hash")
	assert.NotEqual(t, a.Hash(), ternmigrator.New(fsys("CREATE TABLE b ();")).Hash(), "changed content, new hash")
	assert.Equal(t, a.Hash(), ternmigrator.New(fsys("CREATE TABLE a ();\n---- create above / drop below ----\nDROP TABLE a;")).Hash(),
		"a drop section is never run, so it is not hashed")
	tpl := fsys("CREATE TABLE {{.t}} ();")
	assert.Equal(t, a.Hash(), ternmigrator.NewWithOptions(tpl, ternmigrator.Options{Data: map[string]any{"t": "a"}}).Hash(), "templates hashed as evaluated")
	assert.NotEqual(t, a.Hash(), ternmigrator.NewWithOptions(tpl, ternmigrator.Options{Data: map[string]any{"t": "b"}}).Hash())
	assert.NotEqual(t, a.Hash(), ternmigrator.NewWithOptions(fsys("CREATE TABLE a ();"), ternmigrator.Options{VersionTable: "public.v"}).Hash(), "the version table is part of the schema")
	assert.Len(t, a.Hash(), 64)
}
