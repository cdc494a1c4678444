package otherqueues_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceasynq"
)

// docs:begin asynq
// NewRewardTask is the producer's task; byOrder gives it a TaskID derived
// from the order, so that asynq gives a duplicate enqueue the same ID.
func NewRewardTask(orderID int64, byOrder bool) *asynq.Task {
	payload, _ := json.Marshal(map[string]int64{"order_id": orderID})
	if byOrder {
		return asynq.NewTask("reward:order", payload, asynq.TaskID(fmt.Sprintf("reward:%d", orderID)))
	}
	return asynq.NewTask("reward:order", payload)
}

// RewardHandler adds 50 points per paid order and skips cancelled ones
// (asynq.SkipRetry). With processed, it records the task's ID in the
// increment's transaction and does nothing for an ID it has seen.
func RewardHandler(pool *pgxpool.Pool, processed bool) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		var p struct {
			OrderID int64 `json:"order_id"`
		}
		if err := json.Unmarshal(t.Payload(), &p); err != nil {
			return fmt.Errorf("%v: %w", err, asynq.SkipRetry)
		}
		taskID, _ := asynq.GetTaskID(ctx)
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var status string
			if err := tx.QueryRow(ctx, `SELECT status FROM orders WHERE id = $1`, p.OrderID).Scan(&status); err != nil {
				return err
			}
			if status == "cancelled" {
				return fmt.Errorf("order %d was cancelled: %w", p.OrderID, asynq.SkipRetry)
			}
			if processed {
				tag, err := tx.Exec(ctx, `INSERT INTO processed_tasks VALUES ($1) ON CONFLICT DO NOTHING`, taskID)
				if err != nil || tag.RowsAffected() == 0 {
					return err
				}
			}
			_, err := tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
			return err
		})
	}
}

func rewardJob(task *asynq.Task, processed bool) twiceasynq.Job {
	return twiceasynq.Job{Schema: schema, Seed: seed, Task: task,
		Handler: func(a *twice.Attempt) asynq.Handler { return RewardHandler(a.Pool, processed) }}
}

// Fixed: the "processed tasks" key on asynq.GetTaskID, the TaskID from the
// order. Every scenario passes, the duplicate enqueue too.
func TestAsynqProcessedKeyPasses(t *testing.T) {
	twiceasynq.AssertIdempotent(t, rewardJob(NewRewardTask(9812, true), true))
}

// SkipRetry on the clean run ends the task: it passes.
func TestAsynqSkipRetryPasses(t *testing.T) {
	twiceasynq.AssertIdempotent(t, rewardJob(NewRewardTask(9813, true), false))
}

// Broken: asynq acks in Redis after the handler returned, so a lost ack or
// a worker that dies before it runs the increment again; and a duplicate
// enqueue runs it twice.
func TestAsynqUnguardedIncrementIsFlagged(t *testing.T) {
	rep := twiceasynq.Check(t.Context(), rewardJob(NewRewardTask(9812, true), false))
	if got := fmt.Sprint(tokens(rep)); got != "[sequential crash@end duplicate-enqueue]" {
		t.Fatalf("flagged by %s:\n%s", got, rep)
	}
}

// Broken: the key without a TaskID from the order; asynq gives the
// duplicate enqueue another task ID, which the key does not catch, whether
// the two copies run one after the other or at once.
func TestAsynqKeyWithoutTaskIDIsFlagged(t *testing.T) {
	rep := twiceasynq.Check(t.Context(), rewardJob(NewRewardTask(9812, false), true))
	if got := fmt.Sprint(tokens(rep)); got != "[duplicate-enqueue duplicate-overlap@1]" {
		t.Fatalf("flagged by %s:\n%s", got, rep)
	}
}

// docs:end asynq
