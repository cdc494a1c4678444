package twice_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// grantBonus checks whether order 9812's bonus was granted, then grants it
// in a transaction: check then act, in separate statements.
func grantBonus(ctx context.Context, a *twice.Attempt) error {
	var granted bool
	if err := a.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM bonuses WHERE order_id = 9812)`).Scan(&granted); err != nil || granted {
		return err
	}
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO bonuses (order_id) VALUES (9812)`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE customers SET points = points + 10 WHERE id = 77`)
		return err
	})
}

func bonusJob(bonuses string) twice.Job {
	return twice.Job{Name: "grant bonus", Schema: pgfixture.SQL(`CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);`, bonuses),
		Seed: twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`), Run: grantBonus}
}

// On the generic queue ConcurrentDuplicates plays both copies of a
// duplicate enqueue at once beside the same-job overlaps: the check-then-act
// without a unique constraint is flagged there, with the words that say
// what happened; with the constraint the second copy's insert fails, it is
// delivered again, and it sees the bonus.
func TestConcurrentDuplicatesOnTheGenericQueue(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, bonusJob(`CREATE TABLE bonuses (order_id bigint NOT NULL)`), twice.ConcurrentDuplicates())
	i := slices.IndexFunc(tokens, func(s string) bool { return s == "duplicate-overlap@1" })
	require.GreaterOrEqual(t, i, 0, rep.String())
	require.Equal(t, "not idempotent: concurrent duplicate enqueue: the producer enqueued the job twice and two workers took both copies at once; job-1 paused after point 1 of 6 while job-2 ran to the end, then job-1 resumed", rep.Findings[i].Headline)

	rep, tokens = findingTokens(t, bonusJob(`CREATE TABLE bonuses (order_id bigint PRIMARY KEY)`), twice.ConcurrentDuplicates())
	require.Empty(t, tokens, rep.String())
	require.Contains(t, rep.Tokens(), "duplicate-overlap@4")

	// Without the option the generic queue plays the same-job overlaps only.
	rep, _ = findingTokens(t, bonusJob(`CREATE TABLE bonuses (order_id bigint PRIMARY KEY)`))
	require.NotContains(t, rep.Tokens(), "duplicate-overlap@1")
}
