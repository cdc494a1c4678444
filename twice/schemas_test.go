package twice_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// billingSchema keeps the balances in a schema of their own, created by the
// migrations, beside an orders table in public.
var billingSchema = pgfixture.SQL(`
CREATE SCHEMA billing;
CREATE TABLE billing.accounts (id bigint PRIMARY KEY, points int NOT NULL);
CREATE TABLE billing.ledger (order_id bigint PRIMARY KEY, points int NOT NULL);
CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL);`)

// billingJob rewards order 9812 on billing.accounts: with the unguarded
// increment, or with the ledger's unique key guarding it (guarded).
func billingJob(guarded bool) twice.Job {
	name := "billing: add 50 points"
	run := func(ctx context.Context, a *twice.Attempt) error {
		_, err := a.Pool.Exec(ctx, `UPDATE billing.accounts SET points = points + 50 WHERE id = 77`)
		return err
	}
	if guarded {
		name = "billing: add 50 points once"
		run = func(ctx context.Context, a *twice.Attempt) error {
			_, err := a.Pool.Exec(ctx, `WITH added AS (
  INSERT INTO billing.ledger (order_id, points) VALUES (9812, 50) ON CONFLICT DO NOTHING RETURNING points)
UPDATE billing.accounts b SET points = b.points + added.points FROM added WHERE b.id = 77`)
			return err
		}
	}
	return twice.Job{Name: name, Schema: billingSchema,
		Seed: twice.SeedSQL(`INSERT INTO billing.accounts VALUES (77, 0)`, `INSERT INTO orders VALUES (9812, 'paid')`), Run: run}
}

// Every schema the migrations created is compared by default: the
// unguarded increment on billing.accounts is flagged without
// twice.Schemas, and its guarded twin passes.
func TestEverySchemaIsComparedByDefault(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, billingJob(false))
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue", "overlap@1"}, tokens, rep.String())
	require.Equal(t, []string{"billing.accounts", "billing.ledger", "orders"}, rep.Reference.Snapshot.Tables())
	require.Contains(t, pgfixture.FormatDiff(rep.Findings[0].Database), "billing.accounts:")

	fixed, tokens := findingTokens(t, billingJob(true))
	require.Empty(t, tokens, fixed.String())
}

// A job that writes only tables an explicit twice.Schemas leaves out fails
// the check, which names the table written and the fix; one that writes a
// compared table too is checked as before.
func TestAJobWritingOnlyUncomparedTablesFails(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), billingJob(false), twice.Schemas("public"))
	require.Error(t, rep.Err, rep.String())
	require.False(t, rep.OK())
	require.Equal(t, `twice: the job wrote billing.accounts, which the check does not compare, and no table it compares: no scenario could fail on the database.
twice.Schemas leaves it out: add "billing" to twice.Schemas, or leave twice.Schemas out to compare every schema`, rep.Err.Error())
	require.Contains(t, rep.String(), "billing.accounts")

	fixed, tokens := findingTokens(t, billingJob(false), twice.Schemas("public", "billing"))
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue", "overlap@1"}, tokens, fixed.String())

	// Writing orders too: a compared table changed, the check runs (and the
	// increment it does not compare is the narrowing's business).
	both := billingJob(false)
	both.Name = "billing and orders"
	inner := both.Run
	both.Run = func(ctx context.Context, a *twice.Attempt) error {
		if _, err := a.Pool.Exec(ctx, `UPDATE orders SET status = 'rewarded' WHERE id = 9812`); err != nil {
			return err
		}
		return inner(ctx, a)
	}
	rep, tokens = findingTokens(t, both, twice.Schemas("public"))
	require.Empty(t, tokens, rep.String())
	require.False(t, strings.Contains(rep.String(), "does not compare"), rep.String())
}
