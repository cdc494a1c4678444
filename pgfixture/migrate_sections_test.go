package pgfixture

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tablesOf lists the tables of schema public, by name.
func tablesOf(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.Pool().Query(ctxT(t), `SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY 1`)
	require.NoError(t, err)
	var names []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		names = append(names, n)
	}
	require.NoError(t, rows.Err())
	return names
}

// FS applies the Up sections of sql-migrate files alone: the Down section
// of the first file, which drops its table, does not run before the second
// file. StatementBegin/StatementEnd keep a function's semicolons; a
// notransaction file sends its statements one by one (CREATE INDEX
// CONCURRENTLY runs in no transaction block).
func TestFSAppliesSQLMigrateUpSections(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"1_customers.sql": {Data: []byte(`-- a comment before the first command
-- +migrate Up
CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
-- +migrate StatementBegin
CREATE FUNCTION add_points(c bigint, n int) RETURNS void AS $$
BEGIN
  UPDATE customers SET points = points + n WHERE id = c;
END;
$$ LANGUAGE plpgsql;
-- +migrate StatementEnd

-- +migrate Down
DROP FUNCTION add_points(bigint, int);
DROP TABLE customers;
`)},
		"2_orders.sql": {Data: []byte(`-- +migrate Up
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers (id));
-- +migrate Down
DROP TABLE orders;
`)},
		"3_index.sql": {Data: []byte(`-- +migrate Up notransaction
CREATE INDEX CONCURRENTLY orders_customer ON orders (customer_id);
CREATE INDEX CONCURRENTLY customers_points ON customers (points); -- a comment
-- +migrate Down
DROP INDEX orders_customer;
`)},
	}
	db := New(t, FS(fsys))
	assert.Equal(t, []string{"customers", "orders"}, tablesOf(t, db), "the Down sections did not run")
	execSQL(t, db, `INSERT INTO customers VALUES (1); SELECT add_points(1, 5)`)
	var n int
	require.NoError(t, db.Pool().QueryRow(ctxT(t), `SELECT count(*) FROM pg_indexes WHERE indexname IN ('orders_customer', 'customers_points')`).Scan(&n))
	assert.Equal(t, 2, n)

	_, err := sharedT(t).CreateDB(ctxT(t), FS(fstest.MapFS{"1.sql": {Data: []byte("-- +migrate Up\n-- +migrate StatementBegin\nSELECT 1;\n")}}))
	require.EqualError(t, err, `pgfixture: 1.sql: "-- +migrate StatementBegin" with no "-- +migrate StatementEnd" after it (sql-migrate refuses the file too)`)
}

// FS applies the up blocks of dbmate files alone, transaction:false
// included; an error's line is the file's.
func TestFSAppliesDbmateUpBlocks(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"20240101000000_customers.sql": {Data: []byte(`-- migrate:up
CREATE TABLE customers (id bigint PRIMARY KEY);

-- migrate:down
DROP TABLE customers;
`)},
		"20240102000000_orders.sql": {Data: []byte(`-- migrate:up transaction:false
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers (id));
-- migrate:down
DROP TABLE orders;
`)},
	}
	db := New(t, FS(fsys))
	assert.Equal(t, []string{"customers", "orders"}, tablesOf(t, db), "the down blocks did not run")

	_, err := sharedT(t).CreateDB(ctxT(t), FS(fstest.MapFS{"1.sql": {Data: []byte("-- migrate:down\nDROP TABLE x;\n")}}))
	require.EqualError(t, err, `pgfixture: 1.sql has "-- migrate:down" and no "-- migrate:up" block: dbmate requires each migration to define one`)
	_, err = sharedT(t).CreateDB(ctxT(t), FS(fstest.MapFS{"1.sql": {Data: []byte("-- migrate:up\nCREATE TABLE a ();\nCREATE TABLEX b ();\n-- migrate:down\nDROP TABLE a;\n")}}))
	require.ErrorContains(t, err, "pgfixture: 1.sql:3:8: ")
}

// FS refuses tern's files, naming ternmigrator: it would run their drop
// sections.
func TestFSRefusesTernFiles(t *testing.T) {
	t.Parallel()
	_, err := sharedT(t).CreateDB(ctxT(t), FS(fstest.MapFS{"001_customers.sql": {Data: []byte("CREATE TABLE customers (id bigint);\n---- create above / drop below ----\nDROP TABLE customers;\n")}}))
	require.ErrorContains(t, err, `pgfixture: migrations look like tern's (001_customers.sql has "---- create above / drop below ----", and FS would run its drop section): use ternmigrator.New(fsys)`)
}

// The settings a migration makes with ALTER DATABASE … SET are the
// template's: every clone gets them, so its sessions see the search_path
// the migrations set. A list keeps its elements; any other value is one
// string.
func TestClonesKeepTheMigrationsDatabaseSettings(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	db := New(t, SQL(`CREATE SCHEMA app; CREATE TABLE app.items (id int PRIMARY KEY);
DO $$ BEGIN
  EXECUTE format('ALTER DATABASE %I SET search_path TO app, "$user", public', current_database());
  EXECUTE format('ALTER DATABASE %I SET statement_timeout TO ''5min''', current_database());
  EXECUTE format('ALTER DATABASE %I SET app.greeting TO %L', current_database(), 'it''s, me');
END $$;`))
	execSQL(t, db, `INSERT INTO items VALUES (1)`)
	var path, timeout, greeting string
	require.NoError(t, db.Pool().QueryRow(ctx, `SELECT current_setting('search_path'), current_setting('statement_timeout'), current_setting('app.greeting')`).Scan(&path, &timeout, &greeting))
	assert.Equal(t, `app, "$user", public`, path)
	assert.Equal(t, "5min", timeout)
	assert.Equal(t, "it's, me", greeting)
	s, err := db.Snapshot(ctx, Schemas("app"))
	require.NoError(t, err)
	assert.Equal(t, "(id=1)", s.Rows("app.items")[0].String())
}
