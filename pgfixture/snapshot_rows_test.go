package pgfixture

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two ExcludeRows on one table both apply: a row is left out when either
// condition is true (a queue adapter's rule and the user's compose). A
// NULL condition keeps the row; "public.table" names the same table as
// "table".
func TestExcludeRowsCompose(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	db := New(t, SQL(`CREATE SCHEMA app;
		CREATE TABLE jobs (kind text, under_check bool, worked bool);
		CREATE TABLE app.jobs (kind text, under_check bool);`))
	execSQL(t, db, `INSERT INTO jobs VALUES ('checked', true, false), ('copy', true, NULL), ('worked', false, true),
		('unknown', NULL, NULL), ('enqueued', false, false), ('mine', false, false);
		INSERT INTO app.jobs VALUES ('checked', true), ('other', false)`)

	kinds := func(opts ...SnapshotOption) []string {
		t.Helper()
		s, err := db.Snapshot(ctx, append([]SnapshotOption{Schemas("public", "app")}, opts...)...)
		require.NoError(t, err)
		var out []string
		for _, r := range s.Rows("jobs") {
			out = append(out, r.String())
		}
		return out
	}
	one := kinds(ExcludeRows("jobs", "under_check"))
	assert.Len(t, one, 4, "one rule: the two under check left out, NULL kept: %v", one)

	both := kinds(ExcludeRows("jobs", "under_check"), ExcludeRows("jobs", "worked"), ExcludeRows("public.jobs", "kind = 'mine'"))
	assert.Equal(t, []string{
		"(kind='enqueued', under_check=false, worked=false)",
		"(kind='unknown', under_check=NULL, worked=NULL)",
	}, both, "every rule applies; a NULL condition keeps the row")

	s, err := db.Snapshot(ctx, Schemas("public", "app"), ExcludeRows("jobs", "under_check"), ExcludeRows("app.jobs", "under_check"))
	require.NoError(t, err)
	assert.Equal(t, "(kind='other', under_check=false)", s.Rows("app.jobs")[0].String())
	assert.Len(t, s.Rows("app.jobs"), 1, "a rule on app.jobs applies to app.jobs only")
}
