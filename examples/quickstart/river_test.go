package rewards_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceriver"
)

// rewardOrder is the quick start's statement on a transaction.
func rewardOrder(ctx context.Context, tx pgx.Tx, orderID int64) error {
	_, err := tx.Exec(ctx, `
WITH added AS (
  INSERT INTO points_ledger (customer_id, order_id, reason, points)
  VALUES (77, $1, 'order_reward', 50)
  ON CONFLICT (order_id, reason) DO NOTHING
  RETURNING customer_id, points)
UPDATE customers c SET points = c.points + added.points
FROM added WHERE c.id = added.customer_id`, orderID)
	return err
}

// The README shows the code from here to the end of the file.

type RewardArgs struct {
	OrderID int64 `json:"order_id"`
}

func (RewardArgs) Kind() string { return "reward_order" }

// RewardWorker gives the points and completes the job in one transaction.
type RewardWorker struct {
	river.WorkerDefaults[RewardArgs]
	pool *pgxpool.Pool
}

func (w *RewardWorker) Work(ctx context.Context, job *river.Job[RewardArgs]) error {
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if err := rewardOrder(ctx, tx, job.Args.OrderID); err != nil {
			return err
		}
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
}

func TestRewardWorker(t *testing.T) {
	twiceriver.AssertIdempotent(t, twiceriver.Job[RewardArgs]{
		Schema: schema,
		Seed:   twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`),
		Args:   RewardArgs{OrderID: 9812},
		Worker: func(a *twice.Attempt) river.Worker[RewardArgs] { return &RewardWorker{pool: a.Pool} },
	})
}
