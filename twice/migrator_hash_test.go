package twice_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// releaseStamp is a migrator of one's own whose Hash() is not hexadecimal,
// as the documented example's is not.
type releaseStamp struct{ hash string }

func (s releaseStamp) Hash() string { return s.hash }

func (s releaseStamp) Migrate(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, `CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL); INSERT INTO counters VALUES (1, 0)`)
	return err
}

// TestALoneCustomMigratorWithAnyHashSetsUpAndChecks: a schema of one
// custom migrator whose Hash() is "stamp v1" (or empty, or short) sets up
// and checks: the buggy counter is flagged, its fixed twin passes.
func TestALoneCustomMigratorWithAnyHashSetsUpAndChecks(t *testing.T) {
	t.Parallel()
	for _, hash := range []string{"stamp v1", "", "7"} {
		buggy := twice.Job{
			Name:   "stamped counter",
			Schema: pgfixture.Migrations(releaseStamp{hash: hash}),
			Run: func(ctx context.Context, a *twice.Attempt) error {
				_, err := a.Pool.Exec(ctx, `UPDATE counters SET n = n + 1 WHERE id = 1`)
				return err
			},
		}
		rep, tokens := findingTokens(t, buggy, twice.Only("sequential"))
		require.Equal(t, []string{"sequential"}, tokens, "hash %q: %s", hash, rep)

		fixed := buggy
		fixed.Run = func(ctx context.Context, a *twice.Attempt) error {
			_, err := a.Pool.Exec(ctx, `UPDATE counters SET n = 1 WHERE id = 1`)
			return err
		}
		rep = twice.Check(context.Background(), fixed, twice.Only("sequential"))
		require.True(t, rep.OK(), "hash %q: %s", hash, rep)
	}
}
