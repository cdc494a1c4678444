package twice_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// bookkeepingSchema has a migration tool's table (golang-migrate's) beside
// the application's.
var bookkeepingSchema = pgfixture.SQL(`
CREATE TABLE schema_migrations (version bigint PRIMARY KEY, dirty boolean NOT NULL, applied_at timestamptz);
CREATE TABLE audit (note text NOT NULL);`)

// appendRow appends a row to table on every delivery: not idempotent.
func appendRow(table string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		if table == "schema_migrations" {
			_, err := a.Pool.Exec(ctx, `INSERT INTO schema_migrations (version, dirty, applied_at) SELECT coalesce(max(version), 0) + 1, false, now() FROM schema_migrations`)
			return err
		}
		_, err := a.Pool.Exec(ctx, `INSERT INTO audit (note) VALUES ('ran')`)
		return err
	}
}

// A migration tool's bookkeeping table is never compared: the rows a job
// appends to it are no finding (nor are its timestamps varying values),
// while the same rows appended to an application table are.
func TestMigrationBookkeepingIsNotCompared(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "append to schema_migrations", Schema: bookkeepingSchema, Run: appendRow("schema_migrations")}
	rep, tokens := findingTokens(t, job)
	require.Empty(t, tokens, rep.String())
	require.Equal(t, []string{"audit"}, rep.Reference.Snapshot.Tables())
	require.Empty(t, rep.Varying)

	job = twice.Job{Name: "append to audit", Schema: bookkeepingSchema, Run: appendRow("audit")}
	_, tokens = findingTokens(t, job)
	require.Contains(t, tokens, "sequential")
}
