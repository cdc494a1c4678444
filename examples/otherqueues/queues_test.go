package otherqueues_test

// README:begin
import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

var schema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL, status text NOT NULL);
CREATE TABLE gue_jobs (job_id text PRIMARY KEY, job_type text NOT NULL, args bytea NOT NULL);`)

var seed = twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`,
	`INSERT INTO orders VALUES (9812, 77, 'paid'), (9813, 77, 'cancelled')`)

// --- asynq: func(ctx, *asynq.Task) error; asynq.SkipRetry ends the task. ---

// Task and SkipRetry have the shapes of asynq's *Task and SkipRetry.
type Task struct {
	typ     string
	payload []byte
}

func (t *Task) Type() string    { return t.typ }
func (t *Task) Payload() []byte { return t.payload }

var SkipRetry = errors.New("skip retry for the task")

// rewardHandler is an asynq handler: a cancelled order is not retried.
func rewardHandler(pool *pgxpool.Pool) func(ctx context.Context, t *Task) error {
	return func(ctx context.Context, t *Task) error {
		var p struct{ OrderID int64 }
		if err := json.Unmarshal(t.Payload(), &p); err != nil {
			return fmt.Errorf("%v: %w", err, SkipRetry)
		}
		var status string
		if err := pool.QueryRow(ctx, `SELECT status FROM orders WHERE id = $1`, p.OrderID).Scan(&status); err != nil {
			return err
		}
		if status == "cancelled" {
			return fmt.Errorf("order %d was cancelled: %w", p.OrderID, SkipRetry)
		}
		_, err := pool.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
		return err
	}
}

func TestAsynqHandler(t *testing.T) {
	job := func(orderID int64) twice.Job {
		return twice.Job{Name: "asynq reward", Schema: schema, Seed: seed,
			Run: func(ctx context.Context, a *twice.Attempt) error {
				payload, _ := json.Marshal(map[string]int64{"OrderID": orderID})
				return rewardHandler(a.Pool)(ctx, &Task{typ: "reward:order", payload: payload})
			}}
	}
	asynq := twice.TerminalError(func(err error) bool { return errors.Is(err, SkipRetry) })
	twice.AssertIdempotent(t, job(9813), asynq) // SkipRetry on the clean run: the task ends, not retried
	// asynq acks after the handler returns: a lost ack reruns the increment.
	rep := twice.Check(t.Context(), job(9812), asynq)
	if got := fmt.Sprint(tokens(rep)); got != "[sequential crash@end duplicate-enqueue overlap@1]" {
		t.Fatalf("flagged by %s:\n%s", got, rep)
	}
}

func tokens(rep *twice.Report) (t []string) {
	for _, f := range rep.Findings {
		t = append(t, f.Token)
	}
	return t
}

// --- gue: func(ctx, *gue.Job) error; the work in j.Tx() commits with the job's deletion. ---

// GueJob has the shape of gue's *Job: its transaction holds the job's row.
type GueJob struct {
	ID   string
	Type string
	Args []byte
	tx   pgx.Tx
}

func (j *GueJob) Tx() pgx.Tx { return j.tx }

// rewardGue works in the job's transaction, as gue's docs recommend.
func rewardGue(ctx context.Context, j *GueJob) error {
	_, err := j.Tx().Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
	return err
}

// gueRun is gue's worker for one delivery: lock the job's row in a
// transaction, run the handler with it, delete the row and commit.
func gueRun(handler func(context.Context, *GueJob) error) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
			j := &GueJob{ID: a.JobID, tx: tx}
			err := tx.QueryRow(ctx, `SELECT job_type, args FROM gue_jobs WHERE job_id = $1 FOR UPDATE SKIP LOCKED`, a.JobID).Scan(&j.Type, &j.Args)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil // done already, or another worker holds it
			}
			if err != nil {
				return err
			}
			if err := handler(ctx, j); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `DELETE FROM gue_jobs WHERE job_id = $1`, a.JobID)
			return err
		})
	}
}

// gue is the queue's semantics: the job's row is inserted when it is first
// delivered, and the ack is its deletion, committed with the work.
var gue = []twice.Option{
	twice.QueueBookkeeping(func(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (string, error) {
		if d.Number == 1 {
			_, err := db.Exec(ctx, `INSERT INTO gue_jobs VALUES ($1, 'reward', '{}')`, d.JobID)
			return "", err
		}
		return "", nil
	}, nil),
	twice.AckInJobTransaction(func(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (bool, error) {
		var gone bool
		err := db.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM gue_jobs WHERE job_id = $1)`, d.JobID).Scan(&gone)
		return gone, err
	}),
}

func TestGueHandler(t *testing.T) {
	once := twice.WithoutDuplicateEnqueue("one gue job per order, inserted with the order")
	job := twice.Job{Name: "gue reward", Schema: schema, Seed: seed, Run: gueRun(rewardGue)}
	twice.AssertIdempotent(t, job, append(gue, once)...)

	// The same work on the pool, outside j.Tx(): a crash before the job's
	// commit reruns it.
	outside := func(pool *pgxpool.Pool) func(context.Context, *GueJob) error {
		return func(ctx context.Context, _ *GueJob) error {
			_, err := pool.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
			return err
		}
	}
	job.Run = func(ctx context.Context, a *twice.Attempt) error { return gueRun(outside(a.Pool))(ctx, a) }
	rep := twice.Check(t.Context(), job, append(gue, once)...)
	if got := fmt.Sprint(tokens(rep)); got != "[crash@4 crash@5]" {
		t.Fatalf("flagged by %s:\n%s", got, rep)
	}
}

// README:end
