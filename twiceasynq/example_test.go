package twiceasynq_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceasynq"
)

var schema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE processed_tasks (task_id text PRIMARY KEY);`)

var seed = twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`)

// addPoints adds 50 points; guarded, it records the task's ID in the same
// transaction and does nothing for an ID it has seen.
func addPoints(pool *pgxpool.Pool, guarded bool) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if guarded {
				tag, err := tx.Exec(ctx, `INSERT INTO processed_tasks VALUES ($1) ON CONFLICT DO NOTHING`, id)
				if err != nil || tag.RowsAffected() == 0 {
					return err
				}
			}
			_, err := tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
			return err
		})
	}
}

// A "processed tasks" key on asynq.GetTaskID, with a TaskID derived from
// the order: every scenario passes.
func ExampleCheck() {
	rep := twiceasynq.Check(context.Background(), twiceasynq.Job{Schema: schema, Seed: seed,
		Task:    asynq.NewTask("reward:order", []byte(`{"order_id":9812}`), asynq.TaskID("reward:9812")),
		Handler: func(a *twice.Attempt) asynq.Handler { return addPoints(a.Pool, true) }})
	fmt.Println("idempotent:", rep.OK())
	// Output: idempotent: true
}

// Without the key, asynq's ack comes after the increment, in Redis: a lost
// ack runs it again.
func ExampleAssertIdempotent() {
	tb := &recorder{name: "TestReward"}
	twiceasynq.AssertIdempotent(tb, twiceasynq.Job{Schema: schema, Seed: seed,
		Task:    asynq.NewTask("reward:order", []byte(`{"order_id":9812}`)),
		Handler: func(a *twice.Attempt) asynq.Handler { return addPoints(a.Pool, false) }})
	fmt.Println("failed:", tb.failed)
	// Output: failed: true
}

// ExpectIdempotent lets the test go on; without a TaskID, asynq gives a
// duplicate enqueue another task ID, which the key does not catch.
func ExampleExpectIdempotent() {
	tb := &recorder{name: "TestReward"}
	ok := twiceasynq.ExpectIdempotent(tb, twiceasynq.Job{Schema: schema, Seed: seed,
		Task:    asynq.NewTask("reward:order", []byte(`{"order_id":9812}`)),
		Handler: func(a *twice.Attempt) asynq.Handler { return addPoints(a.Pool, true) }})
	fmt.Println(ok)
	// Output: false
}

// Twice gives the job and asynq's semantics to twice itself.
func ExampleJob_Twice() {
	job, opts := twiceasynq.Job{Schema: schema, Seed: seed,
		Task:    asynq.NewTask("reward:order", []byte(`{"order_id":9812}`)),
		Handler: func(a *twice.Attempt) asynq.Handler { return addPoints(a.Pool, true) }}.Twice()
	rep := twice.Check(context.Background(), job, append(opts, twice.Only("duplicate-enqueue"))...)
	fmt.Println(rep.OK(), rep.Tokens())
	// Output: false [duplicate-enqueue]
}

// shipOrder enqueues the order's reward through the application's client
// (an *asynq.Client in production), under a TaskID that makes a second
// enqueue a no-op.
func shipOrder(client interface {
	EnqueueContext(context.Context, *asynq.Task, ...asynq.Option) (*asynq.TaskInfo, error)
}) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		_, err := client.EnqueueContext(ctx, asynq.NewTask("reward:order", t.Payload()), asynq.TaskID("reward:9812"))
		if errors.Is(err, asynq.ErrTaskIDConflict) {
			return nil // enqueued by an earlier delivery
		}
		return err
	}
}

// The handler enqueues a follow-up through NewClient(a); Mux, the
// application's ServeMux, works it after every scenario.
func ExampleNewClient() {
	rep := twiceasynq.Check(context.Background(), twiceasynq.Job{Schema: schema, Seed: seed,
		Task:    asynq.NewTask("order:ship", []byte(`{"order_id":9812}`)),
		Handler: func(a *twice.Attempt) asynq.Handler { return shipOrder(twiceasynq.NewClient(a)) },
		Mux: func(a *twice.Attempt) *asynq.ServeMux {
			mux := asynq.NewServeMux()
			mux.Handle("reward:order", addPoints(a.Pool, true))
			return mux
		}})
	fmt.Println("idempotent:", rep.OK())
	fmt.Println(rep.Reference.Snapshot.Rows("customers"))
	// Output:
	// idempotent: true
	// [(id=77, points=50)]
}

// The application builds its own *asynq.Client from its settings; under
// the check the settings are RedisClientOpt(a), a Redis the check owns for
// the attempt. Every enqueue through that client is a point of the
// attempt, refused as asynq refuses it, and worked by Mux.
func ExampleRedisClientOpt() {
	rep := twiceasynq.Check(context.Background(), twiceasynq.Job{Schema: schema, Seed: seed,
		Task: asynq.NewTask("order:ship", []byte(`{"order_id":9812}`)),
		Handler: func(a *twice.Attempt) asynq.Handler {
			client := asynq.NewClient(twiceasynq.RedisClientOpt(a)) // the app's own client
			return shipOrder(client)
		},
		Mux: func(a *twice.Attempt) *asynq.ServeMux {
			mux := asynq.NewServeMux()
			mux.Handle("reward:order", addPoints(a.Pool, true))
			return mux
		}})
	fmt.Println("idempotent:", rep.OK())
	fmt.Println(rep.Reference.Snapshot.Rows("customers"))
	// Output:
	// idempotent: true
	// [(id=77, points=50)]
}

// recorder is a twice.TB that records whether it failed.
type recorder struct {
	name   string
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Name() string          { return r.name }
func (r *recorder) Logf(string, ...any)   {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
