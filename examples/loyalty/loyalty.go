// Package loyalty is the first source document's loyalty-points job, "reward
// order 9812 with 50 points", in three forms:
//
//   - [IncrementJob]: "add 50 points" — changing a value by an amount is not
//     idempotent; a lost ack, a crash before the ack or a producer that
//     enqueues twice each give the points again.
//   - [CheckThenActJob]: look in a log first and add the points only when the
//     reward is not there — the `if` in application code. A crash between
//     the balance update and the log insert gives the points again on
//     redelivery, and two workers at once can both see nothing and both add.
//   - [CheckThenActInTxJob]: the same check and act in one transaction. No
//     crash can split it any more, and every sequential scenario passes;
//     only two deliveries at once show that both can run the SELECT, both
//     see nothing, and both add the points. Under SERIALIZABLE isolation
//     (twice.Isolation(twice.Serializable)) PostgreSQL aborts one of them and
//     the queue's redelivery finds the reward: the check passes.
//   - [LedgerJob]: the fix. A ledger with a unique constraint, and one
//     statement that inserts the ledger row and moves the balance only if the
//     insert happened. The database, not an `if`, refuses the second reward.
package loyalty

import (
	"context"
	"embed"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

//go:embed schema.sql
var schemaFS embed.FS

// Schema is the story's schema: customers, points_ledger, reward_log.
var Schema = pgfixture.FS(schemaFS)

// Seed is the data every scenario starts from: customer 77 about to be
// rewarded, and customer 78 whose balance must never move.
var Seed = twice.SeedSQL(`INSERT INTO customers (id, name, points) VALUES (77, 'Ann', 120), (78, 'Bob', 40)`)

// RewardOrder is the job's payload: reward CustomerID for OrderID. It carries
// stable IDs, so a duplicate can be recognised.
type RewardOrder struct {
	CustomerID int64
	OrderID    int64
}

// Order9812 is the payload every form of the story is checked with.
var Order9812 = RewardOrder{CustomerID: 77, OrderID: 9812}

// Points is what an order is worth.
const Points = 50

// Increment adds the points to the balance: "add 50 points to customer 77".
func (p RewardOrder) Increment(ctx context.Context, a *twice.Attempt) error {
	_, err := a.Pool.Exec(ctx, `UPDATE customers SET points = points + $2 WHERE id = $1`, p.CustomerID, Points)
	return err
}

// CheckThenAct is the document's "common mistake", in Go: look for the
// reward, and if it is not there, add the points and then log the reward.
func (p RewardOrder) CheckThenAct(ctx context.Context, a *twice.Attempt) error {
	var one int
	err := a.Pool.QueryRow(ctx, `SELECT 1 FROM reward_log WHERE order_id = $1 AND reason = 'order_reward'`, p.OrderID).Scan(&one)
	switch {
	case err == nil:
		return nil // already rewarded
	case !errors.Is(err, pgx.ErrNoRows):
		return err
	}
	if _, err := a.Pool.Exec(ctx, `UPDATE customers SET points = points + $2 WHERE id = $1`, p.CustomerID, Points); err != nil {
		return err
	}
	_, err = a.Pool.Exec(ctx, `INSERT INTO reward_log (customer_id, order_id, reason, points) VALUES ($1, $2, 'order_reward', $3)`,
		p.CustomerID, p.OrderID, Points)
	return err
}

// CheckThenActInTx is CheckThenAct in one transaction.
func (p RewardOrder) CheckThenActInTx(ctx context.Context, a *twice.Attempt) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		var n int
		err := tx.QueryRow(ctx, `SELECT count(*) FROM reward_log WHERE order_id = $1 AND reason = 'order_reward'`, p.OrderID).Scan(&n)
		if err != nil || n > 0 {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE customers SET points = points + $2 WHERE id = $1`, p.CustomerID, Points); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO reward_log (customer_id, order_id, reason, points) VALUES ($1, $2, 'order_reward', $3)`,
			p.CustomerID, p.OrderID, Points)
		return err
	})
}

// Ledger records the reward in the ledger and updates the balance only if the
// insert actually happened, in one statement. Run it again and the insert
// hits the unique constraint, returns nothing, and the update touches no
// rows; run it twice at the same time and the database lets exactly one
// insert win while the other waits and then does nothing.
func (p RewardOrder) Ledger(ctx context.Context, a *twice.Attempt) error {
	_, err := a.Pool.Exec(ctx, `
WITH added AS (
  INSERT INTO points_ledger (customer_id, order_id, reason, points)
  VALUES ($1, $2, 'order_reward', $3)
  ON CONFLICT (order_id, reason) DO NOTHING
  RETURNING customer_id, points
)
UPDATE customers c
SET points = c.points + added.points
FROM added
WHERE c.id = added.customer_id`, p.CustomerID, p.OrderID, Points)
	return err
}

func job(name string, run func(context.Context, *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: Schema, Seed: Seed, Run: run}
}

// IncrementJob is the broken "add 50 points" job for order 9812.
func IncrementJob() twice.Job { return job("loyalty: increment", Order9812.Increment) }

// CheckThenActJob is the broken check-then-act job for order 9812.
func CheckThenActJob() twice.Job { return job("loyalty: check then act", Order9812.CheckThenAct) }

// CheckThenActInTxJob is the check-then-act job for order 9812 in one
// transaction.
func CheckThenActInTxJob() twice.Job {
	return job("loyalty: check then act, in a transaction", Order9812.CheckThenActInTx)
}

// LedgerJob is the fixed job for order 9812: the ledger and the ON CONFLICT CTE.
func LedgerJob() twice.Job { return job("loyalty: ledger", Order9812.Ledger) }

// Forms lists the story's forms with what the check is expected to say.
func Forms() []story.Form {
	return []story.Form{{
		Story: "loyalty", Name: "increment", Job: IncrementJob(),
		Flagged: []string{"sequential", "crash@end", "duplicate-enqueue"},
		Lesson:  "changing a value by an amount is not idempotent",
	}, {
		Story: "loyalty", Name: "check-then-act", Job: CheckThenActJob(),
		Flagged: []string{"crash@3"},
		Race:    true,
		Lesson:  "an if in application code is not a unique constraint",
	}, {
		Story: "loyalty", Name: "check-then-act-in-tx", Job: CheckThenActInTxJob(),
		Race:   true,
		Lesson: "in one transaction no crash splits it, but two workers at once both see nothing and both add",
	}, {
		Story: "loyalty", Name: "check-then-act-in-tx+serializable", Job: CheckThenActInTxJob(),
		Options: []twice.Option{twice.Isolation(twice.Serializable)},
		Lesson:  "under SERIALIZABLE, PostgreSQL aborts one of the two and the redelivery finds the reward",
	}, {
		Story: "loyalty", Name: "ledger", Job: LedgerJob(),
		Lesson: "let the database refuse the duplicate: a unique constraint and ON CONFLICT DO NOTHING",
	}}
}
