package twice_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

func queueFindings(rep *twice.Report) []string {
	var t []string
	for _, f := range rep.Findings {
		t = append(t, f.Token)
	}
	return t
}

var queueSchema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE queue (job_id text PRIMARY KEY);
CREATE TABLE locks (id int PRIMARY KEY);
CREATE TABLE ledger (order_id bigint PRIMARY KEY);`)

var queueSeed = twice.SeedSQL(`INSERT INTO customers VALUES (77, 0)`)

// queueRows is a queue whose row of a job is inserted on its first delivery
// and whose ack is that row's deletion.
var queueRows = []twice.Option{
	twice.QueueBookkeeping(func(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (string, error) {
		if d.Number > 1 {
			return "", nil
		}
		_, err := db.Exec(ctx, `INSERT INTO queue VALUES ($1)`, d.JobID)
		return "", err
	}, nil),
	twice.AckInJobTransaction(func(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (bool, error) {
		var gone bool
		err := db.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM queue WHERE job_id = $1)`, d.JobID).Scan(&gone)
		return gone, err
	}),
	twice.WithoutDuplicateEnqueue("one queue row per order"),
	twice.WithoutConcurrency("the ack's transaction is what is checked here"),
}

// The increment and the ack (the queue row's deletion) in one transaction
// pass every scenario; the same ack in a transaction of its own after the
// work leaves a crash in between that runs the increment again.
func TestAckInTheJobsTransaction(t *testing.T) {
	increment := `UPDATE customers SET points = points + 50 WHERE id = 77`
	ack := `DELETE FROM queue WHERE job_id = $1`
	together := twice.Job{Name: "ack with the work", Schema: queueSchema, Seed: queueSeed,
		Run: func(ctx context.Context, a *twice.Attempt) error {
			return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, increment); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, ack, a.JobID)
				return err
			})
		}}
	rep := twice.Check(t.Context(), together, append(queueRows, twice.EveryCrashPoint())...)
	if rep.Err != nil || !rep.OK() {
		t.Fatalf("the ack in the work's transaction was flagged:\n%s", rep)
	}
	if got, want := fmt.Sprint(rep.Tokens()), "[sequential crash@1 crash@2 crash@3 crash@4 crash@end]"; got != want {
		t.Errorf("scenarios: got %s, want %s", got, want)
	}

	apart := together
	apart.Name = "ack after the work"
	apart.Run = func(ctx context.Context, a *twice.Attempt) error {
		if _, err := a.Pool.Exec(ctx, increment); err != nil {
			return err
		}
		_, err := a.Pool.Exec(ctx, ack, a.JobID)
		return err
	}
	rep = twice.Check(t.Context(), apart, queueRows...)
	if got, want := fmt.Sprint(queueFindings(rep)), "[crash@2]"; got != want {
		t.Fatalf("findings: got %s, want %s\n%s", got, want, rep)
	}
	want := `timeline:
  attempt 1 of job-1:
      1  UPDATE customers SET points = points + 50 WHERE id = 77
      2  CRASH before DELETE FROM queue WHERE job_id = $1
  attempt 2 of job-1:
      1  UPDATE customers SET points = points + 50 WHERE id = 77
      2  DELETE FROM queue WHERE job_id = $1
         done
`
	if got := rep.Findings[0].Timeline; got != want {
		t.Errorf("timeline:\n%s\nwant:\n%s", got, want)
	}
}

var errSnooze = errors.New("snooze: a stale lock was cleared")

// staleLockJob takes a lock row, does its (idempotent) work and drops the
// lock; a delivery that finds the lock left by a crashed attempt clears it
// and asks to be delivered later.
var staleLockJob = twice.Job{Name: "stale lock", Schema: queueSchema, Seed: queueSeed,
	Run: func(ctx context.Context, a *twice.Attempt) error {
		tag, err := a.Pool.Exec(ctx, `INSERT INTO locks VALUES (1) ON CONFLICT DO NOTHING`)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			_, err := a.Pool.Exec(ctx, `DELETE FROM locks`)
			return errors.Join(errSnooze, err)
		}
		if _, err := a.Pool.Exec(ctx, `WITH l AS (INSERT INTO ledger VALUES (9812) ON CONFLICT DO NOTHING RETURNING 1)
UPDATE customers SET points = points + 50 WHERE id = 77 AND EXISTS (SELECT FROM l)`); err != nil {
			return err
		}
		_, err = a.Pool.Exec(ctx, `DELETE FROM locks`)
		return err
	}}

// A snooze is a delivery, not a failure: with two deliveries allowed, the
// crash after the lock, the snooze and the third delivery pass; without
// SnoozeError the queue gives up after the snooze.
func TestSnoozeIsNotAFailedDelivery(t *testing.T) {
	opts := []twice.Option{twice.MaxDeliveries(2), twice.Only("crash@3"), twice.WithoutConcurrency("sequential only")}
	snooze := twice.SnoozeError(func(err error) bool { return errors.Is(err, errSnooze) })
	rep := twice.Check(t.Context(), staleLockJob, append(opts, snooze)...)
	if rep.Err != nil || !rep.OK() {
		t.Fatalf("the snooze was counted as a failure:\n%s", rep)
	}
	if n := len(rep.Scenarios[0].Attempts); n != 3 {
		t.Errorf("crash@3 ran %d attempts, want 3 (crash, snooze, success)", n)
	}
	rep = twice.Check(t.Context(), staleLockJob, opts...)
	if got, want := fmt.Sprint(problems(rep.Findings[0])), "[job-1 never succeeded: the queue gave up after 2 deliveries; the last time it returned: snooze: a stale lock was cleared]"; got != want {
		t.Errorf("problems: got %s, want %s\n%s", got, want, rep)
	}
}

// A job that acks in its transaction, then does more: the crash after the
// ack loses what came after, and the generic headline says the queue did
// not deliver it again (as the timeline does), not "then redelivery".
func TestHeadlineSaysTheAckHadCommitted(t *testing.T) {
	job := twice.Job{Name: "ack, then more", Schema: queueSchema, Seed: queueSeed,
		Run: func(ctx context.Context, a *twice.Attempt) error {
			if err := pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, `DELETE FROM queue WHERE job_id = $1`, a.JobID)
				return err
			}); err != nil {
				return err
			}
			_, err := a.Pool.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
			return err
		}}
	rep := twice.Check(t.Context(), job, queueRows...)
	var headline string
	for _, f := range rep.Findings {
		if f.Token == "crash@4" {
			headline = f.Headline
		}
	}
	want := "not idempotent: crash before point 4 of 4 (UPDATE customers SET points = points + 50 WHERE id = 77); its ack had committed in its own transaction, so the queue did not deliver it again"
	if headline != want {
		t.Errorf("crash@4's headline:\n got: %s\nwant: %s\n%s", headline, want, rep)
	}
	// With the queue's words, what happened reaches them.
	var saw twice.Happened
	rep = twice.Check(t.Context(), job, append(queueRows, twice.Only("crash@4"),
		twice.QueueWordsOf(func(s twice.Scenario, h twice.Happened, generic string) string { saw = h; return generic }))...)
	if !saw.AckCommitted || saw.Redelivered {
		t.Errorf("QueueWordsOf got %+v, want the ack committed and no redelivery\n%s", saw, rep)
	}
}
