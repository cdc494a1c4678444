package pgfixture

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/pgserver"
)

// shopSchema has serial and identity ids, a now() default, a foreign key,
// and rows inserted by a migration.
var shopSchema = SQL(
	`CREATE TABLE customers (
		id serial PRIMARY KEY,
		name text NOT NULL,
		email text,
		created_at timestamptz NOT NULL DEFAULT now()
	);
	CREATE TABLE orders (
		id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		customer_id int NOT NULL REFERENCES customers,
		total numeric(12,2) NOT NULL,
		status text NOT NULL DEFAULT 'new'
	);
	CREATE TABLE rewards (
		customer_id int REFERENCES customers,
		order_id bigint REFERENCES orders,
		reason text,
		points int,
		PRIMARY KEY (customer_id, order_id)
	);`,
	`INSERT INTO customers (name, email) VALUES ('Ann', 'ann@example.com'), ('Bob', NULL);
	INSERT INTO orders (customer_id, total) VALUES (1, 10.50);`,
)

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func sharedT(t testing.TB) *Server {
	t.Helper()
	srv, err := Shared(ctxT(t))
	require.NoError(t, err)
	return srv
}

func execSQL(t testing.TB, db *DB, sql string, args ...any) {
	t.Helper()
	_, err := db.Pool().Exec(context.Background(), sql, args...)
	require.NoError(t, err, sql)
}

func scalar[T any](t testing.TB, pool *pgxpool.Pool, sql string, args ...any) T {
	t.Helper()
	var v T
	require.NoError(t, pool.QueryRow(context.Background(), sql, args...).Scan(&v), sql)
	return v
}

func TestParallelTestsGetIsolatedDatabases(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	held := map[string]bool{} // databases held by a running test
	used := 0
	t.Run("group", func(t *testing.T) {
		for i := range 6 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				db := New(t, shopSchema)
				mu.Lock()
				assert.False(t, held[db.Name()], "two running tests got the same database")
				held[db.Name()] = true
				used++
				mu.Unlock()
				t.Cleanup(func() {
					mu.Lock()
					delete(held, db.Name())
					mu.Unlock()
				})
				execSQL(t, db, "INSERT INTO customers (name) VALUES ($1)", fmt.Sprint("worker-", i))
				got := scalar[[]string](t, db.Pool(), "SELECT array_agg(name ORDER BY name) FROM customers")
				assert.Equal(t, []string{"Ann", "Bob", fmt.Sprint("worker-", i)}, got)
			})
		}
	})
	assert.Equal(t, 6, used)
}

func sequenceState(t testing.TB, db *DB) map[string]string {
	t.Helper()
	rows, err := db.Pool().Query(context.Background(), `SELECT c.relname FROM pg_class c WHERE c.relkind = 'S' ORDER BY 1`)
	require.NoError(t, err)
	seqs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	out := map[string]string{}
	for _, s := range seqs {
		out[s] = scalar[string](t, db.Pool(), fmt.Sprintf("SELECT last_value || '/' || is_called FROM %s", pgx.Identifier{s}.Sanitize()))
	}
	return out
}

func TestResetRestoresTheMigratedState(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	db := New(t, shopSchema)
	want, err := db.Snapshot(ctx, KeepVolatile())
	require.NoError(t, err)
	wantSeqs := sequenceState(t, db)
	newConns := db.Pool().Stat().NewConnsCount()
	name := db.Name()

	for round := range 3 {
		execSQL(t, db, `INSERT INTO customers (name) VALUES ('Cy')`)
		execSQL(t, db, `INSERT INTO orders (customer_id, total) VALUES (3, 1), (2, 2)`)
		execSQL(t, db, `INSERT INTO rewards VALUES (2, 2, 'order_reward', 50)`)
		execSQL(t, db, `UPDATE customers SET email = '' WHERE name = 'Bob'`)
		execSQL(t, db, `DELETE FROM orders WHERE id = 1`)
		execSQL(t, db, `SELECT setval('customers_id_seq', 1000)`)
		got, err := db.Snapshot(ctx, KeepVolatile())
		require.NoError(t, err)
		require.NotEmpty(t, Diff(want, got))

		require.NoError(t, db.Reset(ctx), "round %d", round)
		got, err = db.Snapshot(ctx, KeepVolatile())
		require.NoError(t, err)
		assert.Empty(t, FormatDiff(Diff(want, got)), "round %d", round)
		assert.Equal(t, wantSeqs, sequenceState(t, db), "round %d: sequence values", round)
	}
	assert.Equal(t, "3", scalar[string](t, db.Pool(), `SELECT nextval('customers_id_seq')::text`), "the next serial after the migrated rows")
	assert.Equal(t, name, db.Name(), "no new database")
	assert.Equal(t, newConns, db.Pool().Stat().NewConnsCount(), "no new connection")
}

// TestResetAsNonSuperuser covers the path without session_replication_role:
// deletes in foreign-key order, and a foreign-key cycle.
func TestResetAsNonSuperuser(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := sharedT(t)
	if srv.Mode() == "dsn" {
		t.Skip("creates a role; only on servers pgfixture started")
	}
	other := dsnServer(t, srv, "twicekit_plain", "plain-pw", false)
	db, err := other.CreateDB(ctx, SQL(`
		CREATE TABLE a (id int PRIMARY KEY, b_id int);
		CREATE TABLE b (id int PRIMARY KEY, a_id int REFERENCES a);
		ALTER TABLE a ADD FOREIGN KEY (b_id) REFERENCES b;
		CREATE TABLE parent (id serial PRIMARY KEY);
		CREATE TABLE child (id serial PRIMARY KEY, parent_id int REFERENCES parent ON DELETE RESTRICT);
		CREATE TABLE log (msg text);
		INSERT INTO parent DEFAULT VALUES; INSERT INTO child (parent_id) VALUES (1);
		INSERT INTO a VALUES (1, NULL);`))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close(context.Background(), false) })
	assert.False(t, other.super)
	want, err := db.Snapshot(ctx, KeepVolatile())
	require.NoError(t, err)
	execSQL(t, db, `INSERT INTO parent DEFAULT VALUES; INSERT INTO child (parent_id) VALUES (2), (1);
		INSERT INTO b VALUES (1, 1); UPDATE a SET b_id = 1; INSERT INTO log VALUES ('x')`)
	newConns := db.Pool().Stat().NewConnsCount()
	require.NoError(t, db.Reset(ctx))
	got, err := db.Snapshot(ctx, KeepVolatile())
	require.NoError(t, err)
	assert.Empty(t, FormatDiff(Diff(want, got)))
	assert.Equal(t, newConns, db.Pool().Stat().NewConnsCount(), "no new connection")
}

func TestResetReclonesWhenTheSchemaChanged(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	db := New(t, shopSchema)
	want, err := db.Snapshot(ctx, KeepVolatile())
	require.NoError(t, err)
	execSQL(t, db, `ALTER TABLE customers ADD COLUMN vip bool; INSERT INTO customers (name) VALUES ('Cy'); CREATE TABLE extra (x int)`)
	require.NoError(t, db.Reset(ctx))
	got, err := db.Snapshot(ctx, KeepVolatile())
	require.NoError(t, err)
	assert.Empty(t, FormatDiff(Diff(want, got)))
	assert.False(t, scalar[bool](t, db.Pool(), `SELECT EXISTS (SELECT FROM pg_class WHERE relname = 'extra')`))
	// And the fast path works again afterwards.
	execSQL(t, db, `INSERT INTO customers (name) VALUES ('Dee')`)
	require.NoError(t, db.Reset(ctx))
	got, err = db.Snapshot(ctx, KeepVolatile())
	require.NoError(t, err)
	assert.Empty(t, FormatDiff(Diff(want, got)))
}

func TestDiff(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	db := New(t, shopSchema)
	want, err := db.Snapshot(ctx)
	require.NoError(t, err)

	// Same logical content, but new serial ids and now() values: no diff.
	execSQL(t, db, `DELETE FROM customers WHERE name = 'Bob'; INSERT INTO customers (name) VALUES ('Bob');
		UPDATE customers SET created_at = now() + interval '1 day' WHERE name = 'Ann'`)
	got, err := db.Snapshot(ctx)
	require.NoError(t, err)
	assert.Nil(t, Diff(want, got), FormatDiff(Diff(want, got)))
	assert.NotNil(t, Diff(mustSnap(t, db, KeepVolatile()), withReset(t, db, KeepVolatile())), "KeepVolatile sees the new ids")

	// An extra row, a missing row and a changed value.
	execSQL(t, db, `INSERT INTO rewards VALUES (1, 1, 'order_reward', 50);
		DELETE FROM customers WHERE name = 'Bob'; UPDATE customers SET email = '' WHERE name = 'Ann'`)
	got, err = db.Snapshot(ctx)
	require.NoError(t, err)
	d := Diff(want, got)
	assert.Equal(t, `customers:
  - (name='Ann', email='ann@example.com')
  - (name='Bob', email=NULL)
  + (name='Ann', email='')
rewards:
  + (customer_id=1, order_id=1, reason='order_reward', points=50)
`, FormatDiff(d))
	require.Len(t, d, 2)
	assert.Equal(t, "rewards", d[1].Table)
	assert.Empty(t, d[1].Missing)
	assert.Len(t, d[1].Extra, 1)

	// Ignoring and normalising columns.
	got, err = db.Snapshot(ctx, IgnoreColumns("customers.email"), Normalize("rewards.reason", strings.ToUpper), Schemas("public"))
	require.NoError(t, err)
	want2, err := db.Snapshot(ctx, IgnoreColumns("public.customers.email"), Normalize("reason", strings.ToUpper))
	require.NoError(t, err)
	assert.Nil(t, Diff(want2, got))
	assert.Equal(t, []Row{{Columns: []string{"customer_id", "order_id", "reason", "points"}, Values: []string{"1", "1", "'ORDER_REWARD'", "50"}}}, got.Rows("rewards"))
	assert.NotContains(t, got.Rows("customers")[0].Columns, "email")
}

func mustSnap(t *testing.T, db *DB, opts ...SnapshotOption) *Snapshot {
	t.Helper()
	s, err := db.Snapshot(context.Background(), opts...)
	require.NoError(t, err)
	return s
}

func withReset(t *testing.T, db *DB, opts ...SnapshotOption) *Snapshot {
	t.Helper()
	require.NoError(t, db.Reset(context.Background()))
	return mustSnap(t, db, opts...)
}

func TestSnapshotPrintsValuesReadably(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	db := New(t, SQL(`CREATE TYPE mood AS ENUM ('ok', 'sad');
		CREATE SCHEMA billing;
		CREATE TABLE billing.v (
			n numeric, cents bigint, t text, b bool, ts timestamptz, lt timestamp, d date,
			j jsonb, js json, arr int[], tarr text[], m mood, u uuid, by bytea, f float8)`))
	execSQL(t, db, `SET TIME ZONE 'Europe/Paris'; INSERT INTO billing.v VALUES
		(12345678901234567890.000000001, 1999, 'it''s', true, '2024-03-01 12:00:00.5+01', '2024-03-01 12:00:00', '2024-03-01',
		 '{"b": [1, 2], "a": {"y": null, "x": "s"}}', '{"z":1,  "a":2}', '{1,NULL,3}', '{"a b",c}', 'sad',
		 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\xdead', 0.1),
		(NULL, NULL, '', false, NULL, NULL, NULL, NULL, NULL, '{}', NULL, NULL, NULL, NULL, NULL)`)
	s, err := db.Snapshot(ctx, Schemas("billing"))
	require.NoError(t, err)
	assert.Equal(t, []string{"billing.v"}, s.Tables())
	rows := s.Rows("billing.v")
	require.Len(t, rows, 2)
	assert.Equal(t, `(n=12345678901234567890.000000001, cents=1999, t='it''s', b=true, ts=2024-03-01T11:00:00.5Z, lt=2024-03-01T12:00:00, d=2024-03-01, `+
		`j={"a": {"x": "s", "y": null}, "b": [1, 2]}, js={"a": 2, "z": 1}, arr={1,NULL,3}, tarr={"a b",c}, m='sad', `+
		`u=a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11, by=\xdead, f=0.1)`, rows[0].String())
	assert.Equal(t, `(n=NULL, cents=NULL, t='', b=false, ts=NULL, lt=NULL, d=NULL, j=NULL, js=NULL, arr={}, tarr=NULL, m=NULL, u=NULL, by=NULL, f=NULL)`, rows[1].String())
	empty, err := db.Snapshot(ctx, Schemas("public"))
	require.NoError(t, err)
	assert.Empty(t, empty.Tables(), "public has no tables")
	every, err := db.Snapshot(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"billing.v"}, every.Tables(), "by default every schema is read")
}

func TestBrokenMigrationNamesFileAndPosition(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := sharedT(t)
	fsys := fstest.MapFS{
		"001_init.sql":   {Data: []byte("CREATE TABLE ok (id int);\n")},
		"002_broken.sql": {Data: []byte("-- adds a table\nCREATE TABLE t (\n  id int,\n  name txet\n);\n")},
		"README.md":      {Data: []byte("not a migration")},
	}
	_, err := srv.CreateDB(ctx, FS(fsys))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "002_broken.sql:4:8:")
	assert.Contains(t, err.Error(), `type "txet" does not exist`)
	assert.Contains(t, err.Error(), "42704")

	_, err = srv.CreateDB(ctx, SQL("CREATE TABLE a (id int);", "SELECT 1;\nSELEC 2;"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "migration 2:2:1:")
	assert.Contains(t, err.Error(), `syntax error at or near "SELEC"`)

	// A runtime error has no position but still names the migration.
	_, err = srv.CreateDB(ctx, SQL("CREATE TABLE a (id int PRIMARY KEY); INSERT INTO a VALUES (1), (1);"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "migration 1")
	assert.Contains(t, err.Error(), "duplicate key")

	// Read errors surface from CreateDB.
	_, err = srv.CreateDB(ctx, FS(fstest.MapFS{}))
	require.ErrorContains(t, err, "no *.sql files")

	// And New says what went wrong through Fatalf.
	ftb := &fakeTB{name: "TestX"}
	ftb.run(func() { New(ftb, SQL("CREAT TABLE x ()")) })
	assert.True(t, ftb.failed)
	assert.Contains(t, strings.Join(ftb.logs, "\n"), "migration 1:1:1:")
}

func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

func TestUnreachableDSNFailsFast(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"closed port":  fmt.Sprintf("postgres://fixture:Secret-Pw-1@127.0.0.1:%d/postgres?sslmode=disable", closedPort(t)),
		"keyword form": fmt.Sprintf("host=127.0.0.1 port=%d user=fixture password=Secret-Pw-1 dbname=postgres sslmode=disable", closedPort(t)),
		// 192.0.2.0/24 is TEST-NET-1: never routed, so the connect either
		// times out or fails at once; both must end well within 10 s.
		"blackhole": "postgres://fixture:Secret-Pw-1@192.0.2.1:5432/postgres?sslmode=disable",
	}
	for name, dsn := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			srv, err := newServerFromDSN(context.Background(), "dsn", dsn, nil)
			elapsed := time.Since(start)
			require.Error(t, err)
			assert.Nil(t, srv)
			assert.Less(t, elapsed, 10*time.Second)
			assert.Contains(t, err.Error(), "cannot connect to postgres://fixture:xxxxx@")
			assert.Contains(t, err.Error(), "check that the server is running")
			assert.NotContains(t, err.Error(), "Secret-Pw-1")
		})
	}
}

func TestNoProviderErrorListsEveryProvider(t *testing.T) {
	// Not parallel: it sets environment variables.
	t.Setenv(envMode, "dsn")
	t.Setenv(envDSN, fmt.Sprintf("postgres://u:Secret-Pw-2@127.0.0.1:%d/x", closedPort(t)))
	_, err := startServer(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TWICE_POSTGRES=dsn")
	assert.Contains(t, err.Error(), "apt-get install postgresql")
	assert.NotContains(t, err.Error(), "Secret-Pw-2")

	t.Setenv(envMode, "nonsense")
	_, err = startServer(context.Background())
	assert.ErrorContains(t, err, "not one of dsn, container, local")

	// TWICE_DATABASE_URL set and unreachable: its error, never a fallback
	// to the providers after it.
	t.Setenv(envMode, "")
	saved := providers
	t.Cleanup(func() { providers = saved })
	fallback := false
	providers = []provider{
		{"dsn", startDSN},
		{"container", func(context.Context) (*Server, error) { fallback = true; return nil, fmt.Errorf("docker: not running") }},
		{"local", func(context.Context) (*Server, error) { fallback = true; return nil, fmt.Errorf("no initdb") }},
	}
	_, err = startServer(context.Background())
	require.Error(t, err)
	assert.False(t, fallback, "a URL that is set is never passed over")
	assert.Contains(t, err.Error(), "TWICE_DATABASE_URL is set, but its server cannot be used: cannot connect to postgres://u:xxxxx@127.0.0.1:")
	assert.Contains(t, err.Error(), "unset TWICE_DATABASE_URL")
	assert.NotContains(t, err.Error(), "Secret-Pw-2")

	// Every provider failing: one error naming each.
	t.Setenv(envDSN, "")
	_, err = startServer(context.Background())
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "- dsn: TWICE_DATABASE_URL is not set")
	assert.Contains(t, msg, "- container: docker: not running")
	assert.Contains(t, msg, "- local: no initdb")
	assert.Contains(t, msg, "set TWICE_DATABASE_URL")
	assert.NotContains(t, msg, "Secret-Pw-2")
}

// dsnServer creates a role on srv and returns a dsn-mode Server connecting
// as that role with a password, as TWICE_DATABASE_URL would.
func dsnServer(t *testing.T, srv *Server, role, password string, super bool) *Server {
	t.Helper()
	ctx := ctxT(t)
	attrs := "LOGIN CREATEDB"
	if super {
		attrs += " SUPERUSER"
	}
	_, err := srv.admin.Exec(ctx, fmt.Sprintf("DROP ROLE IF EXISTS %s; CREATE ROLE %s %s PASSWORD %s",
		role, role, attrs, quoteLiteral(password)))
	require.NoError(t, err)
	u, err := url.Parse(rawAdminURL(srv)) // the local cluster's socket as its host parameter
	require.NoError(t, err)
	u.User, u.Path = url.UserPassword(role, password), "/postgres"
	other, err := newServerFromDSN(ctx, "dsn", u.String(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Close(context.Background()) })
	return other
}

func TestDSNModeTouchesOnlyItsOwnDatabases(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := sharedT(t)
	if srv.Mode() == "dsn" {
		t.Skip("creates a role and a database; only on servers pgfixture started")
	}
	const pw = "Pa55-word!x"
	// A pre-existing database of someone else, with data.
	userdb := "userdata_" + randHex(3)
	_, err := srv.admin.Exec(ctx, "CREATE DATABASE "+userdb)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = srv.admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+userdb+" WITH (FORCE)") })
	ucfg := srv.adminCfg.Copy()
	ucfg.Database = userdb
	uconn, err := pgx.ConnectConfig(ctx, ucfg)
	require.NoError(t, err)
	_, err = uconn.Exec(ctx, "CREATE TABLE precious (id int, v text); INSERT INTO precious VALUES (1, 'keep me')")
	require.NoError(t, err)
	require.NoError(t, uconn.Close(ctx))
	before := databases(t, srv)

	other := dsnServer(t, srv, "twicekit_dsn", pw, true)
	assert.Equal(t, "dsn", other.Mode())
	assert.NotContains(t, other.URL(), pw)
	assert.Contains(t, other.URL(), "xxxxx")

	schema := SQL(`CREATE TABLE dsn_only_` + randHex(4) + ` (id int);
		CREATE TABLE dsn_only (id serial, note text); INSERT INTO dsn_only (note) VALUES ('x')`)
	db, err := other.CreateDB(ctx, schema)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(db.Name(), dbPrefix))
	assert.NotContains(t, db.URL(), pw)
	assert.Equal(t, pw, db.ConnConfig().Password, "ConnConfig carries the real password for callers")
	execSQL(t, db, "INSERT INTO dsn_only (note) VALUES ('y')")
	require.NoError(t, db.Reset(ctx))
	_, err = db.Snapshot(ctx)
	require.NoError(t, err)
	_, err = other.CreateDB(ctx, SQL("CREATE TABLE broken (id nosuchtype)"))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), pw)
	db2, err := other.CreateDB(ctx, schema)
	require.NoError(t, err)
	require.NoError(t, db.Close(ctx, false))

	// A kept database stays after Close.
	kept, err := other.CreateDB(ctx, schema)
	require.NoError(t, err)
	require.NoError(t, kept.Close(ctx, true))
	assert.Contains(t, allDatabases(t, srv), kept.Name())
	require.NoError(t, other.Close(ctx))
	after := allDatabases(t, srv)
	assert.NotContains(t, after, db2.Name(), "Close drops fixture databases")
	assert.NotContains(t, after, templateName(schema.Hash()), "Close drops its templates")
	assert.Contains(t, after, kept.Name(), "kept databases stay")
	require.NoError(t, srv.dropDatabase(ctx, kept.Name()))
	assert.Equal(t, before, databases(t, srv), "no other database created or dropped")

	uconn, err = pgx.ConnectConfig(ctx, ucfg)
	require.NoError(t, err)
	defer uconn.Close(ctx)
	var v string
	require.NoError(t, uconn.QueryRow(ctx, "SELECT v FROM precious WHERE id = 1").Scan(&v))
	assert.Equal(t, "keep me", v)
}

func allDatabases(t *testing.T, srv *Server) []string {
	t.Helper()
	rows, err := srv.admin.Query(context.Background(), `SELECT datname FROM pg_database ORDER BY 1`)
	require.NoError(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return names
}

func databases(t *testing.T, srv *Server) []string {
	t.Helper()
	// Only the databases this test can be sure about: not the fixtures of
	// tests running in parallel.
	rows, err := srv.admin.Query(context.Background(), `SELECT datname FROM pg_database ORDER BY 1`)
	require.NoError(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	out := names[:0]
	for _, n := range names {
		if strings.HasPrefix(n, dbPrefix) {
			continue // fixtures of parallel tests come and go
		}
		out = append(out, n)
	}
	return out
}

// fakeTB records what New does with a TB.
type fakeTB struct {
	mu       sync.Mutex
	name     string
	fail     bool
	failed   bool
	logs     []string
	cleanups []func()
}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Name() string { return f.name }
func (f *fakeTB) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Logf(format, args...)
	f.mu.Lock()
	f.failed = true
	f.mu.Unlock()
	panic(fakeFatal{})
}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Failed() bool      { return f.fail || f.failed }

type fakeFatal struct{}

// run calls body like a test would, then the cleanups.
func (f *fakeTB) run(body func()) {
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(fakeFatal); !ok {
					panic(r)
				}
			}
		}()
		body()
	}()
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestNewKeepsTheDatabaseOfAFailedTest(t *testing.T) {
	t.Parallel()
	srv := sharedT(t)
	var name string
	ftb := &fakeTB{name: "TestFails", fail: true}
	ftb.run(func() { name = New(ftb, shopSchema).Name() })
	require.Len(t, ftb.logs, 1)
	assert.True(t, strings.HasPrefix(ftb.logs[0], "pgfixture: kept database postgres://"), ftb.logs[0])
	assert.Contains(t, ftb.logs[0], name)
	var comment string
	require.NoError(t, srv.admin.QueryRow(context.Background(),
		`SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1`, name).Scan(&comment))
	kept, _, label := keptInfo(comment)
	assert.True(t, kept, comment)
	assert.Equal(t, "TestFails", label, "kept under the test's name, so its next failure replaces it")
	require.NoError(t, srv.dropDatabase(context.Background(), name))

	// A passing test's database is reset and handed to the next test of the
	// same schema, in the migrated state; only Server.Close drops it.
	ok := &fakeTB{name: "TestPasses"}
	ok.run(func() {
		db := New(ok, shopSchema)
		name = db.Name()
		execSQL(t, db, "INSERT INTO customers (name) VALUES ('Zed')")
	})
	assert.Empty(t, ok.logs)
	again := &fakeTB{name: "TestNext"}
	again.run(func() {
		db := New(again, shopSchema)
		if db.Name() == name {
			assert.Equal(t, []string{"Ann", "Bob"}, scalar[[]string](t, db.Pool(), "SELECT array_agg(name ORDER BY name) FROM customers"))
		}
	})
}

func TestMaskDSN(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://u:pw@h:5432/db?sslmode=disable": "postgres://u:xxxxx@h:5432/db?sslmode=disable",
		"postgresql://u:p%40w@h/db":                 "postgresql://u:xxxxx@h/db",
		"postgres://u@h/db?password=pw":             "postgres://u@h/db?password=xxxxx",
		"host=h user=u password=pw dbname=d":        "host=h user=u password=xxxxx dbname=d",
		"host=h password = 'p w\\'x' dbname=d":      "host=h password = xxxxx dbname=d",
		"postgres://u:p w@h:bad/db":                 "postgres://u:xxxxx@h:bad/db",
	} {
		assert.Equal(t, want, maskDSN(in), in)
	}
	sc := newScrubber("p@ss word")
	assert.Equal(t, "a xxxxx b xxxxx c xxxxx", sc.String("a p@ss word b p%40ss+word c p@ss%20word"))
}

func TestStaleFixtureDatabasesOfDeadProcessesAreDropped(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := sharedT(t)
	dead := pgserver.Self
	dead.PID = deadPID(t)
	dead.Start = "1"
	otherHost := pgserver.Self
	otherHost.Host = "elsewhere"
	otherHost.PID = dead.PID
	mk := func(suffix, comment string) string {
		name := fmt.Sprintf("%sf0_stale%s_%s", dbPrefix, suffix, randHex(3))
		_, err := srv.admin.Exec(ctx, "CREATE DATABASE "+name)
		require.NoError(t, err)
		_, err = srv.admin.Exec(ctx, fmt.Sprintf("COMMENT ON DATABASE %s IS %s", name, quoteLiteral(comment)))
		require.NoError(t, err)
		t.Cleanup(func() { _ = srv.dropDatabase(context.Background(), name) })
		return name
	}
	gone := mk("dead", dead.String())
	kept := mk("kept", dead.String()+" kept")
	live := mk("live", pgserver.Self.String())
	remote := mk("remote", otherHost.String())
	require.NoError(t, srv.dropStale(ctx))
	exists := func(n string) bool {
		return scalar[bool](t, srv.admin, `SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)`, n)
	}
	assert.False(t, exists(gone), "a dead process's fixture is dropped")
	assert.True(t, exists(kept), "kept databases stay")
	assert.True(t, exists(live), "a live process's fixture stays")
	assert.True(t, exists(remote), "another host's fixture stays")
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	require.NoError(t, err)
	_, err = p.Wait()
	require.NoError(t, err)
	return p.Pid
}

func TestOwnerParsing(t *testing.T) {
	t.Parallel()
	o, ok := pgserver.ParseOwner(pgserver.Self.String())
	require.True(t, ok)
	assert.Equal(t, pgserver.Self, o)
	assert.False(t, pgserver.Self.Dead())
	_, ok = pgserver.ParseOwner("something else")
	assert.False(t, ok)
}

func TestSchemaHash(t *testing.T) {
	t.Parallel()
	assert.Equal(t, SQL("a", "b").Hash(), SQL("a", "b").Hash())
	assert.NotEqual(t, SQL("a", "b").Hash(), SQL("ab").Hash())
	assert.Equal(t, SQL("x").Hash(), FS(fstest.MapFS{"1.sql": {Data: []byte("x")}}).Hash())
	assert.Len(t, Schema{}.Hash(), 64)
}

func TestClosedDatabasesAreResetAndReused(t *testing.T) {
	t.Parallel()
	srv := sharedT(t)
	ctx := context.Background()
	schema := SQL(`CREATE TABLE reuse_only (id serial PRIMARY KEY, v text NOT NULL);
INSERT INTO reuse_only (v) VALUES ('migrated');`)
	db, err := srv.CreateDB(ctx, schema)
	require.NoError(t, err)
	name := db.Name()
	execSQL(t, db, "INSERT INTO reuse_only (v) VALUES ('test data')")
	require.NoError(t, db.Close(ctx, false))
	require.Error(t, db.Reset(ctx), "a closed DB is not usable")

	again, err := srv.CreateDB(ctx, schema)
	require.NoError(t, err)
	defer func() { require.NoError(t, again.Close(ctx, false)) }()
	require.Equal(t, name, again.Name(), "the warm database is reused, not cloned")
	require.Equal(t, []string{"migrated"}, scalar[[]string](t, again.Pool(), "SELECT array_agg(v ORDER BY id) FROM reuse_only"))
	require.Equal(t, int64(2), scalar[int64](t, again.Pool(), "SELECT nextval('reuse_only_id_seq')"), "sequences restart too")
}
