package twiceasynq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The loyalty ledger as asynq handlers: the same handlers run under the
// check and, in the differential suite, on a real asynq.Server.

var schema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL, status text NOT NULL);
CREATE TABLE processed_tasks (task_id text PRIMARY KEY);
CREATE TABLE deliveries (n serial, task_id text NOT NULL, retry_count int NOT NULL, max_retry int NOT NULL, queue text NOT NULL);`)

var seed = twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`,
	`INSERT INTO orders VALUES (9812, 77, 'paid'), (9813, 77, 'cancelled')`)

const rewardType = "reward:order"

type rewardPayload struct {
	OrderID int64 `json:"order_id"`
}

func payload(orderID int64) []byte {
	b, _ := json.Marshal(rewardPayload{OrderID: orderID})
	return b
}

// orderOf reads the payload; a payload that does not parse is not retried.
func orderOf(t *asynq.Task) (int64, error) {
	var p rewardPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return 0, fmt.Errorf("%v: %w", err, asynq.SkipRetry)
	}
	return p.OrderID, nil
}

// reward adds 50 points unless the order was cancelled (SkipRetry). The
// increment is unguarded: asynq's ack comes after it, in Redis.
func reward(pool *pgxpool.Pool) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		id, err := orderOf(t)
		if err != nil {
			return err
		}
		var status string
		if err := pool.QueryRow(ctx, `SELECT status FROM orders WHERE id = $1`, id).Scan(&status); err != nil {
			return err
		}
		if status == "cancelled" {
			return fmt.Errorf("order %d was cancelled: %w", id, asynq.SkipRetry)
		}
		_, err = pool.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = (SELECT customer_id FROM orders WHERE id = $1)`, id)
		return err
	}
}

// rewardOnce is the common asynq pattern: a "processed tasks" key on the
// task ID, written in the increment's transaction.
func rewardOnce(pool *pgxpool.Pool) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		id, err := orderOf(t)
		if err != nil {
			return err
		}
		taskID, ok := asynq.GetTaskID(ctx)
		if !ok {
			return errors.New("no task ID in the context")
		}
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `INSERT INTO processed_tasks VALUES ($1) ON CONFLICT DO NOTHING`, taskID)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			_, err = tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = (SELECT customer_id FROM orders WHERE id = $1)`, id)
			return err
		})
	}
}

// revokeCancelled revokes the task of a cancelled order (RevokeTask: not
// retried, not archived).
func revokeCancelled(pool *pgxpool.Pool) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		id, err := orderOf(t)
		if err != nil {
			return err
		}
		var status string
		if err := pool.QueryRow(ctx, `SELECT status FROM orders WHERE id = $1`, id).Scan(&status); err != nil {
			return err
		}
		if status == "cancelled" {
			return fmt.Errorf("order %d was cancelled: %w", id, revokeTask)
		}
		return nil
	}
}

// rewardKeyed writes the processed key without ON CONFLICT: once the work
// has committed, every redelivery fails on the key, is retried up to
// MaxRetry and then archived, though the work was done.
func rewardKeyed(pool *pgxpool.Pool) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		id, err := orderOf(t)
		if err != nil {
			return err
		}
		taskID, _ := asynq.GetTaskID(ctx)
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO processed_tasks VALUES ($1)`, taskID); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = (SELECT customer_id FROM orders WHERE id = $1)`, id)
			return err
		})
	}
}

// logged logs every delivery with what asynq's context says, then runs h.
func logged(pool *pgxpool.Pool, h asynq.Handler) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		n, _ := asynq.GetRetryCount(ctx)
		maxRetry, _ := asynq.GetMaxRetry(ctx)
		q, _ := asynq.GetQueueName(ctx)
		if _, err := pool.Exec(ctx, `INSERT INTO deliveries (task_id, retry_count, max_retry, queue) VALUES ($1, $2, $3, $4)`, id, n, maxRetry, q); err != nil {
			return err
		}
		return h.ProcessTask(ctx, t)
	}
}
