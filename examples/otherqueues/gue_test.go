package otherqueues_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/vgarvardt/gue/v5"

	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twicegue"
)

// docs:begin gue
// RewardWork adds 50 points per order in the job's transaction (j.Tx()),
// which gue commits with the job's deletion; the order's key in the same
// transaction makes a duplicate enqueue add nothing.
func RewardWork(ctx context.Context, j *gue.Job) error {
	var p struct {
		OrderID int64 `json:"order_id"`
	}
	if err := json.Unmarshal(j.Args, &p); err != nil {
		return gue.ErrDiscardJob(err.Error())
	}
	tag, err := j.Tx().Exec(ctx, `INSERT INTO rewarded_orders VALUES ($1) ON CONFLICT DO NOTHING`, p.OrderID)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	_, err = j.Tx().Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
	return err
}

// RewardWorkOnPool adds the points on the pool, outside j.Tx(): they commit
// before gue deletes the job.
func RewardWorkOnPool(pool *pgxpool.Pool) gue.WorkFunc {
	return func(ctx context.Context, j *gue.Job) error {
		_, err := pool.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
		return err
	}
}

func gueJob(work func(a *twice.Attempt) gue.WorkFunc) twicegue.Job {
	args, _ := json.Marshal(map[string]int64{"order_id": 9812})
	return twicegue.Job{Schema: schema, Seed: seed, Job: &gue.Job{Type: "reward", Args: args},
		WorkMap: func(a *twice.Attempt) gue.WorkMap { return gue.WorkMap{"reward": work(a)} }}
}

// Fixed: the work in j.Tx(), keyed on the order.
func TestGueWorkInTheJobsTransactionPasses(t *testing.T) {
	twicegue.AssertIdempotent(t, gueJob(func(*twice.Attempt) gue.WorkFunc { return RewardWork }))
}

// Broken: the work outside j.Tx(); a worker that dies before gue's commit
// (crash@4, before its DELETE; crash@5, before its commit) leaves the
// points added and the job to another worker; and gue has no uniqueness,
// so a duplicate enqueue adds them twice.
func TestGueWorkOutsideTheJobsTransactionIsFlagged(t *testing.T) {
	rep := twicegue.Check(t.Context(), gueJob(func(a *twice.Attempt) gue.WorkFunc { return RewardWorkOnPool(a.Pool) }))
	if got := fmt.Sprint(tokens(rep)); got != "[crash@4 crash@5 duplicate-enqueue]" {
		t.Fatalf("flagged by %s:\n%s", got, rep)
	}
}

// docs:end gue
