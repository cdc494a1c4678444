package twicegue

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/vgarvardt/gue/v5"
	"github.com/vgarvardt/gue/v5/adapter/pgxv5"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The loyalty ledger as gue work functions: the same functions run under
// the check and, in the differential suite, on gue's own worker pool.

var schema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL, status text NOT NULL);
CREATE TABLE rewarded_orders (order_id bigint PRIMARY KEY);
CREATE TABLE deliveries (n serial, job_id text NOT NULL, error_count int NOT NULL);`)

var seed = twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`,
	`INSERT INTO orders VALUES (9812, 77, 'paid'), (9813, 77, 'cancelled')`)

const rewardType = "reward"

func args(orderID int64) []byte {
	b, _ := json.Marshal(map[string]int64{"order_id": orderID})
	return b
}

func orderOf(j *gue.Job) (int64, error) {
	var p struct {
		OrderID int64 `json:"order_id"`
	}
	if err := json.Unmarshal(j.Args, &p); err != nil {
		return 0, gue.ErrDiscardJob(err.Error())
	}
	return p.OrderID, nil
}

// rewardInTx adds the points in the job's transaction: they commit with
// gue's deletion of the job. Cancelled orders are discarded.
func rewardInTx(ctx context.Context, j *gue.Job) error {
	id, err := orderOf(j)
	if err != nil {
		return err
	}
	var status string
	if err := j.Tx().QueryRow(ctx, `SELECT status FROM orders WHERE id = $1`, id).Scan(&status); err != nil {
		return err
	}
	if status == "cancelled" {
		return gue.ErrDiscardJob(fmt.Sprintf("order %d was cancelled", id))
	}
	_, err = j.Tx().Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = (SELECT customer_id FROM orders WHERE id = $1)`, id)
	return err
}

// rewardOncePerOrder is rewardInTx keyed on the order in the same
// transaction: a duplicate enqueue (another job ID) adds nothing.
func rewardOncePerOrder(ctx context.Context, j *gue.Job) error {
	id, err := orderOf(j)
	if err != nil {
		return err
	}
	tag, err := j.Tx().Exec(ctx, `INSERT INTO rewarded_orders VALUES ($1) ON CONFLICT DO NOTHING`, id)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	return rewardInTx(ctx, j)
}

// rewardOnPool adds the points on the pool, outside j.Tx(): they commit
// before gue's deletion of the job.
func rewardOnPool(pool *pgxpool.Pool) gue.WorkFunc {
	return func(ctx context.Context, j *gue.Job) error {
		id, err := orderOf(j)
		if err != nil {
			return err
		}
		_, err = pool.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = (SELECT customer_id FROM orders WHERE id = $1)`, id)
		return err
	}
}

// logged records the delivery (gue's job ID and error count) in the job's
// transaction, then runs wf.
func logged(wf gue.WorkFunc) gue.WorkFunc {
	return func(ctx context.Context, j *gue.Job) error {
		if _, err := j.Tx().Exec(ctx, `INSERT INTO deliveries (job_id, error_count) VALUES ($1, $2)`, j.ID.String(), j.ErrorCount); err != nil {
			return err
		}
		return wf(ctx, j)
	}
}

const notifyType = "notify"

// rewardAndNotify rewards the order once and enqueues a notification in the
// job's transaction, stamped with the wall clock: {"at": …, "order_id": …}.
// With everyCopy it enqueues the notification even when the order was
// already rewarded (a duplicate enqueue notifies twice).
func rewardAndNotify(pool *pgxpool.Pool, everyCopy bool) gue.WorkFunc {
	return func(ctx context.Context, j *gue.Job) error {
		id, err := orderOf(j)
		if err != nil {
			return err
		}
		tag, err := j.Tx().Exec(ctx, `INSERT INTO rewarded_orders VALUES ($1) ON CONFLICT DO NOTHING`, id)
		if err != nil || (tag.RowsAffected() == 0 && !everyCopy) {
			return err
		}
		client, err := gue.NewClient(pgxv5.NewConnPool(pool))
		if err != nil {
			return err
		}
		b, _ := json.Marshal(map[string]any{"at": time.Now().UTC(), "order_id": id})
		return client.EnqueueTx(ctx, &gue.Job{Type: notifyType, Args: b}, j.Tx())
	}
}
