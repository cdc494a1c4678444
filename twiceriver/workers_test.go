package twiceriver_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceriver"
)

// The loyalty ledger as River workers: the work alone is an increment (not
// idempotent); what makes it safe or not is how the job's completion and
// its follow-up job are committed.

var schema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, name text NOT NULL, points int NOT NULL DEFAULT 0);
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL, status text NOT NULL);`)

var seed = twice.SeedSQL(
	`INSERT INTO customers (id, name) VALUES (77, 'Ann')`,
	`INSERT INTO orders (id, customer_id, status) VALUES (9812, 77, 'paid'), (9813, 77, 'cancelled')`)

// RewardArgs rewards an order with 50 points. River inserts it once per
// order (UniqueOpts by args), so a producer's duplicate insert is skipped.
type RewardArgs struct {
	OrderID int64 `json:"order_id"`
}

func (RewardArgs) Kind() string { return "reward_order" }

func (RewardArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// PointsEmailArgs is the follow-up job: tell the customer about the points.
type PointsEmailArgs struct {
	CustomerID int64 `json:"customer_id"`
	OrderID    int64 `json:"order_id"`
}

func (PointsEmailArgs) Kind() string { return "points_email" }

// RewardWorker adds the points, enqueues the email and completes the job in
// one transaction, as River's docs recommend: the completion is the ack.
type RewardWorker struct {
	river.WorkerDefaults[RewardArgs]
	Pool *pgxpool.Pool
	// CompleteInTx completes the job in the transaction (JobCompleteTx);
	// false lets River complete it after Work returns.
	CompleteInTx bool
	// FollowUpOutside inserts the follow-up job before the transaction, on
	// the pool, instead of with InsertTx inside it.
	FollowUpOutside bool
}

func (w *RewardWorker) Work(ctx context.Context, job *river.Job[RewardArgs]) error {
	client := river.ClientFromContext[pgx.Tx](ctx)
	followUp := PointsEmailArgs{CustomerID: 77, OrderID: job.Args.OrderID}
	if w.FollowUpOutside {
		if _, err := client.Insert(ctx, followUp, nil); err != nil {
			return err
		}
	}
	tx, err := w.Pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `UPDATE customers SET points = points + 50
WHERE id = (SELECT customer_id FROM orders WHERE id = $1)`, job.Args.OrderID); err != nil {
		return err
	}
	if !w.FollowUpOutside {
		if _, err := client.InsertTx(ctx, tx, followUp, nil); err != nil {
			return err
		}
	}
	if w.CompleteInTx {
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

func rewardJob(w RewardWorker) twiceriver.Job[RewardArgs] {
	return twiceriver.Job[RewardArgs]{
		Schema: schema, Seed: seed, Args: RewardArgs{OrderID: 9812},
		Worker: func(a *twice.Attempt) river.Worker[RewardArgs] { w.Pool = a.Pool; return &w },
	}
}

// CancelWorker cancels the reward of a cancelled order: River must not run
// it again.
type CancelWorker struct {
	river.WorkerDefaults[RewardArgs]
	Pool *pgxpool.Pool
}

func (w *CancelWorker) Work(ctx context.Context, job *river.Job[RewardArgs]) error {
	var status string
	if err := w.Pool.QueryRow(ctx, `SELECT status FROM orders WHERE id = $1`, job.Args.OrderID).Scan(&status); err != nil {
		return err
	}
	if status == "cancelled" {
		return river.JobCancel(fmt.Errorf("order %d was cancelled", job.Args.OrderID))
	}
	_, err := w.Pool.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
	return err
}

// UnboundedRewardWorker is RewardWorker without a timeout: a run can still
// be going when River's rescuer runs the job again.
type UnboundedRewardWorker struct{ RewardWorker }

func (*UnboundedRewardWorker) Timeout(*river.Job[RewardArgs]) time.Duration { return -1 }
