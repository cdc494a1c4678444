package twice_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/longtest"
	"github.com/twicekit/twicekit/twice"
)

// ledgerInOneTransaction is a 30-point job: BEGIN, 28 guarded inserts,
// COMMIT; with increment it also adds points, which is not idempotent.
func ledgerInOneTransaction(increment bool) twice.Job {
	return loyaltyJob("30 points in one transaction", func(ctx context.Context, a *twice.Attempt) error {
		return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
			for i := 1; i <= 28; i++ {
				q := `INSERT INTO points_ledger (customer_id, order_id, reason, points) VALUES (77, $1, 'long', 1) ON CONFLICT (order_id, reason) DO NOTHING`
				if increment && i == 28 {
					q = `UPDATE customers SET points = points + $1 WHERE id = 77`
				}
				if _, err := tx.Exec(ctx, q, i); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

func crashTokens(tokens []string) []string {
	var out []string
	for _, t := range tokens {
		if strings.HasPrefix(t, "crash@") || strings.HasPrefix(t, "overlap@") {
			out = append(out, t)
		}
	}
	return out
}

// TestBudgetsThinLongJobs: under quick a long job's crash and overlap points
// are thinned deterministically, keeping the transaction boundaries and the
// first and last points; the report says what was left out; thorough runs
// every point (so does a budget of one's own; with TWICE_LONG_TESTS=1); a bug
// the sequential scenarios see is flagged either way.
func TestBudgetsThinLongJobs(t *testing.T) {
	t.Parallel()
	quick := twice.WithBudget(twice.QuickBudget)
	rep := twice.Check(context.Background(), ledgerInOneTransaction(false), quick)
	require.True(t, rep.OK(), rep.String())
	require.Equal(t, []string{
		"crash@1", "crash@3", "crash@6", "crash@9", "crash@11", "crash@14", "crash@17", "crash@20", "crash@23", "crash@25", "crash@28", "crash@30", "crash@end",
		"overlap@1", "overlap@5", "overlap@12", "overlap@18", "overlap@25", "overlap@29",
	}, crashTokens(rep.Tokens()))
	require.True(t, strings.HasSuffix(rep.String(), "\nthe quick budget ran crashes before 12 of 30 points and overlaps at 6 of 29 points (transaction boundaries, effects, the first and last points, and others spread evenly); -twice.budget=thorough runs them all"), rep.String())

	broken := twice.Check(context.Background(), ledgerInOneTransaction(true), quick)
	require.False(t, broken.OK())
	require.Equal(t, "sequential", broken.Findings[0].Token)

	if !longtest.Enabled() {
		return // the rest checks the same job twice more (60 scenarios)
	}
	again := twice.Check(context.Background(), ledgerInOneTransaction(false), quick)
	require.Equal(t, rep.Tokens(), again.Tokens(), "the choice is deterministic")

	// thorough, or a budget of one's own, plays every point (this one samples
	// few interleavings, to keep the test short).
	all := twice.Check(context.Background(), ledgerInOneTransaction(false), twice.WithBudget(twice.Budget{Name: "every point", Interleavings: 2, Depth: 2}), twice.EveryCrashPoint())
	require.True(t, all.OK(), all.String())
	require.Len(t, crashTokens(all.Tokens()), 30+1+29)
	require.NotContains(t, all.String(), "budget ran")
}
