package otherqueues_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/twice"
)

// docs:begin own
// A queue nobody wrote an adapter for: the application's own jobs table. A
// worker locks the job's row (a second worker waits for the first), works
// in that transaction and deletes the row in it, so the ack commits with
// the work.
func ownWorker(work func(ctx context.Context, tx pgx.Tx, orderID int64) error) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
			var orderID int64
			err := tx.QueryRow(ctx, `SELECT order_id FROM jobs WHERE id = $1 FOR UPDATE`, a.JobID).Scan(&orderID)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil // done already
			}
			if err != nil {
				return err
			}
			if err := work(ctx, tx, orderID); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `DELETE FROM jobs WHERE id = $1`, a.JobID)
			return err
		})
	}
}

// ownQueue is that queue's semantics as twice's generic options: the
// producer inserts the job's row before its first delivery, and the job
// is acked once its row is gone.
var ownQueue = []twice.Option{
	twice.QueueBookkeeping(func(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (string, error) {
		if d.Number == 1 {
			_, err := db.Exec(ctx, `INSERT INTO jobs VALUES ($1, 9812) ON CONFLICT DO NOTHING`, d.JobID)
			return "", err
		}
		return "", nil
	}, nil),
	twice.AckInJobTransaction(func(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (bool, error) {
		var gone bool
		err := db.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM jobs WHERE id = $1)`, d.JobID).Scan(&gone)
		return gone, err
	}),
}

// Fixed: the points added in the job's transaction, keyed on the order.
func TestOwnQueueWorkInTheJobsTransactionPasses(t *testing.T) {
	job := twice.Job{Name: "own queue reward", Schema: schema, Seed: seed,
		Run: ownWorker(func(ctx context.Context, tx pgx.Tx, orderID int64) error {
			tag, err := tx.Exec(ctx, `INSERT INTO rewarded_orders VALUES ($1) ON CONFLICT DO NOTHING`, orderID)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			_, err = tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
			return err
		})}
	twice.AssertIdempotent(t, job, ownQueue...)
}

// Broken: the same increment without the order's key; a duplicate enqueue
// (a second row for the order) adds the points twice.
func TestOwnQueueWithoutKeyIsFlagged(t *testing.T) {
	job := twice.Job{Name: "own queue reward", Schema: schema, Seed: seed,
		Run: ownWorker(func(ctx context.Context, tx pgx.Tx, _ int64) error {
			_, err := tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
			return err
		})}
	rep := twice.Check(t.Context(), job, ownQueue...)
	if got := fmt.Sprint(tokens(rep)); got != "[duplicate-enqueue]" {
		t.Fatalf("flagged by %s:\n%s", got, rep)
	}
}

// docs:end own
