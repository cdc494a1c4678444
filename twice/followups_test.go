package twice_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// A queue of the application's own, in a table: shipping an order enqueues
// the shipping email 30 s later. The queue works what is enqueued
// (WorkFollowUps); a worked task is gone from its work (left out of the
// comparison), a pending one is compared as a row.

var shipTasksSchema = pgfixture.SQL(`
CREATE TABLE shipments (order_id bigint PRIMARY KEY, shipped boolean NOT NULL DEFAULT false, emailed_at timestamptz);
CREATE TABLE tasks (id bigserial PRIMARY KEY, kind text NOT NULL, order_id bigint NOT NULL, delay_s int NOT NULL, done boolean NOT NULL DEFAULT false);`)

// ship marks the order shipped and enqueues its email in one transaction.
// The insert is not guarded: a redelivery enqueues the email again.
func ship(ctx context.Context, a *twice.Attempt) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE shipments SET shipped = true WHERE order_id = 7`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO tasks (kind, order_id, delay_s) VALUES ('shipping_email', 7, 30)`)
		return err
	})
}

// shippingEmail sends the email of the task's order and records when; once
// sends it only when the order has not been emailed yet.
func shippingEmail(id int64, once bool) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		var emailed *time.Time
		if err := a.Pool.QueryRow(ctx, `SELECT emailed_at FROM shipments WHERE order_id = 7`).Scan(&emailed); err != nil {
			return err
		}
		if emailed == nil || !once {
			if err := a.Mailer.Send(ctx, effects.Email{To: "ann@example.com", Subject: "Your order 7 has shipped"}); err != nil {
				return err
			}
		}
		if _, err := a.Pool.Exec(ctx, `UPDATE shipments SET emailed_at = $1 WHERE order_id = 7 AND emailed_at IS NULL`, a.Now()); err != nil {
			return err
		}
		_, err := a.Pool.Exec(ctx, `UPDATE tasks SET done = true WHERE id = $1`, id)
		return err
	}
}

// pendingShipTasks is the queue's listing: the tasks not done, in the order
// the queue works them. Kinds outside workers have no worker.
func pendingShipTasks(once bool, workers ...string) func(ctx context.Context, db *pgxpool.Pool) ([]twice.FollowUp, error) {
	return func(ctx context.Context, db *pgxpool.Pool) ([]twice.FollowUp, error) {
		rows, err := db.Query(ctx, `SELECT id, kind, delay_s FROM tasks WHERE NOT done ORDER BY delay_s, id`)
		if err != nil {
			return nil, err
		}
		var out []twice.FollowUp
		for rows.Next() {
			var id int64
			var kind string
			var delay int
			if err := rows.Scan(&id, &kind, &delay); err != nil {
				return nil, err
			}
			f := twice.FollowUp{Key: strconv.FormatInt(id, 10), Kind: kind, After: time.Duration(delay) * time.Second}
			for _, w := range workers {
				if w == kind {
					f.Run = shippingEmail(id, once)
				}
			}
			out = append(out, f)
		}
		return out, rows.Err()
	}
}

func shipJob() twice.Job {
	return twice.Job{Name: "ship", Schema: shipTasksSchema, Run: ship,
		Seed: twice.SeedSQL(`INSERT INTO shipments (order_id) VALUES (7)`)}
}

// The queue's own bookkeeping: a done task is gone; no concurrency (the
// subject is the follow-ups).
var shipTasksOptions = []twice.Option{twice.ExcludeRows("tasks", "done"), twice.IgnoreColumns("tasks.id"),
	twice.WithoutConcurrency("the follow-ups are the subject here"), twice.WithoutDuplicateEnqueue("the follow-ups are the subject here")}

// The email worker that sends once per order passes although a
// redelivery enqueues the email twice; the one that sends per task is
// flagged, and the headline names the follow-ups. The email runs on the
// check's clock, 30 s after the shipment, never slept.
func TestFollowUpsAreWorkedAfterEachScenario(t *testing.T) {
	t.Parallel()
	opts := append(shipTasksOptions[:len(shipTasksOptions):len(shipTasksOptions)], twice.WorkFollowUps(pendingShipTasks(true, "shipping_email")))
	started := time.Now()
	rep, tokens := findingTokens(t, shipJob(), opts...)
	require.Empty(t, tokens, rep.String())
	require.Less(t, time.Since(started), 30*time.Second, "the follow-up's 30 s were slept")
	ref := rep.Reference
	require.Len(t, ref.Attempts, 2)
	require.Equal(t, "attempt 1 of follow-up-1", ref.Attempts[1].Name())
	emailed := ref.Snapshot.Rows("shipments")
	require.Contains(t, fmt.Sprint(emailed), "emailed_at=2026-10-12T09:00:30Z", "the follow-up ran 30 s later on the check's clock")
	js, err := rep.JSON()
	require.NoError(t, err)
	require.Contains(t, string(js), `"follow_ups": "worked, at most 20"`)

	opts = append(shipTasksOptions[:len(shipTasksOptions):len(shipTasksOptions)], twice.WorkFollowUps(pendingShipTasks(false, "shipping_email")))
	rep, tokens = findingTokens(t, shipJob(), opts...)
	require.Equal(t, []string{"sequential", "crash@end"}, tokens)
	f := rep.Findings[0]
	require.Equal(t, "not idempotent: sequential: the ack was lost and the same job was delivered again, then the follow-ups it enqueued (follow-up-1: shipping_email, follow-up-2: shipping_email)", f.Headline)
	require.Contains(t, f.Timeline, "  attempt 1 of follow-up-2 (shipping_email):\n")
	again, _ := findingTokens(t, shipJob(), opts...)
	require.Equal(t, rep.String(), again.String(), "the same check gave two reports")
}

// Compared before the follow-ups run, the world is not at rest: the
// pending email is a row the reference run does not have twice. A kind
// with no worker stays a row, and the report says so.
func TestFollowUpsComparedBeforeTheyRunAndKindsWithoutAWorker(t *testing.T) {
	t.Parallel()
	opts := append(shipTasksOptions[:len(shipTasksOptions):len(shipTasksOptions)], twice.WorkFollowUps(pendingShipTasks(true, "shipping_email")), twice.CompareBeforeFollowUps())
	rep, tokens := findingTokens(t, shipJob(), opts...)
	require.Equal(t, []string{"sequential", "crash@end"}, tokens)
	require.NotContains(t, rep.Findings[0].Headline, "follow-ups")

	opts = append(shipTasksOptions[:len(shipTasksOptions):len(shipTasksOptions)], twice.WorkFollowUps(pendingShipTasks(true)))
	rep, tokens = findingTokens(t, shipJob(), opts...)
	require.Equal(t, []string{"sequential", "crash@end"}, tokens)
	require.Contains(t, rep.String(), "\nfollow-ups not worked (no worker registered for their kind; compared as the queue holds them): shipping_email")
}

// FollowUpLimit bounds the work: past it the follow-ups stay rows.
func TestFollowUpLimit(t *testing.T) {
	t.Parallel()
	opts := append(shipTasksOptions[:len(shipTasksOptions):len(shipTasksOptions)], twice.WorkFollowUps(pendingShipTasks(true, "shipping_email")), twice.FollowUpLimit(1), twice.Only("sequential"))
	rep, tokens := findingTokens(t, shipJob(), opts...)
	require.Equal(t, []string{"sequential"}, tokens)
	require.Contains(t, rep.String(), "\nfollow-ups past the first 1 not worked (FollowUpLimit; compared as the queue holds them)")
}

// The queue works the shipping email the job enqueues, 30 s later on the
// check's clock; the world is compared once it ran. A redelivery enqueues
// the email twice, and the email worker sends it once per order: it passes.
func ExampleWorkFollowUps() {
	rep := twice.Check(context.Background(), shipJob(), twice.ExcludeRows("tasks", "done"), twice.IgnoreColumns("tasks.id"),
		twice.WorkFollowUps(pendingShipTasks(true, "shipping_email")), twice.Only("sequential"))
	fmt.Println(rep)
	for _, a := range rep.Scenarios[0].Attempts {
		fmt.Println(a.Name())
	}
	// Output:
	// twice: ship: idempotent in 1 scenario (sequential)
	// attempt 1 of job-1
	// attempt 2 of job-1
	// attempt 1 of follow-up-1
	// attempt 1 of follow-up-2
}

// A long chain of follow-ups is worked to a bound; the rest stay rows.
func ExampleFollowUpLimit() {
	_ = twice.FollowUpLimit(5)
}

// The check as it was before follow-ups were worked: the jobs the job
// enqueued are compared as rows.
func ExampleCompareBeforeFollowUps() {
	_ = twice.CompareBeforeFollowUps()
}

// In a concurrent scenario the follow-ups run after the interleaved
// deliveries, and the timeline says so.
func TestFollowUpsAfterAConcurrentScenario(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, shipJob(), twice.ExcludeRows("tasks", "done"), twice.IgnoreColumns("tasks.id"),
		twice.WorkFollowUps(pendingShipTasks(false, "shipping_email")), twice.Only("overlap@1"))
	require.Equal(t, []string{"overlap@1"}, tokens)
	require.Contains(t, rep.Findings[0].Timeline, "  then the follow-ups it enqueued, one after the other:\n    attempt 1 of follow-up-1 (shipping_email):\n", rep.String())
}

// A job the seed put in the queue is not the checked job's follow-up: it
// is never worked.
func TestSeededJobsAreNotFollowUps(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "look", Schema: shipTasksSchema,
		Run: func(ctx context.Context, a *twice.Attempt) error {
			_, err := a.Pool.Exec(ctx, `UPDATE shipments SET shipped = true WHERE order_id = 7`)
			return err
		},
		Seed: twice.SeedSQL(`INSERT INTO shipments (order_id) VALUES (7)`, `INSERT INTO tasks (kind, order_id, delay_s) VALUES ('shipping_email', 7, 0)`)}
	rep, tokens := findingTokens(t, job, twice.WorkFollowUps(pendingShipTasks(false, "shipping_email")), twice.Only("sequential"))
	require.Empty(t, tokens, rep.String())
	require.Len(t, rep.Reference.Attempts, 1, "the seeded task was worked")
}
