package pgfixture

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tables reads a table outside the schemas read; ExcludeTables leaves one
// out; GeneratedKeys keeps serial columns and marks them and the columns
// referencing them, following chains of foreign keys.
func TestSnapshotTablesAndGeneratedKeys(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	db := New(t, SQL(`CREATE SCHEMA app;
		CREATE TABLE app.parent (id bigserial PRIMARY KEY, name text NOT NULL, at timestamptz DEFAULT now());
		CREATE TABLE app.child (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, parent_id bigint REFERENCES app.parent (id), note text);
		CREATE TABLE app.grandchild (child_id int REFERENCES app.child (id), parent_id bigint, n int);
		CREATE TABLE jobs (kind text);
		CREATE TABLE schema_migrations (version bigint);`))
	execSQL(t, db, `INSERT INTO app.parent (name) VALUES ('p'); INSERT INTO app.child (parent_id, note) VALUES (1, 'c');
		INSERT INTO app.grandchild VALUES (1, 1, 3); INSERT INTO jobs VALUES ('mail')`)
	s, err := db.Snapshot(ctx, Schemas("app"), Tables("jobs"), ExcludeTables("grandchild"))
	require.NoError(t, err)
	assert.Equal(t, []string{"app.child", "app.parent", "jobs"}, s.Tables())
	assert.Equal(t, "(parent_id=1, note='c')", s.Rows("app.child")[0].String())
	assert.False(t, s.HasGeneratedKeys())

	s, err = db.Snapshot(ctx, Schemas("app", "public"), GeneratedKeys(), ExcludeTables(MigrationTables()...))
	require.NoError(t, err)
	assert.Equal(t, []string{"app.child", "app.grandchild", "app.parent", "jobs"}, s.Tables())
	assert.Equal(t, "(id=1, name='p')", s.Rows("app.parent")[0].String(), "now() stays out")
	assert.Equal(t, "(id=1, parent_id=1, note='c')", s.Rows("app.child")[0].String())
	assert.True(t, s.HasGeneratedKeys())
	for _, c := range []struct{ table, col, key string }{
		{"app.parent", "id", "app.parent.id"}, {"app.parent", "name", ""},
		{"app.child", "id", "app.child.id"}, {"app.child", "parent_id", "app.parent.id"},
		{"app.grandchild", "child_id", "app.child.id"}, {"app.grandchild", "parent_id", ""},
	} {
		assert.Equal(t, c.key, s.GeneratedKey(c.table, c.col), c.table+"."+c.col)
	}
}
