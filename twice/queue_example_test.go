package twice_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// errSkip is a queue's "do not retry" error, as asynq's SkipRetry.
var errSkip = errors.New("skip retry")

// A job that gives up on its clean run with a terminal error passes, and
// the queue does not deliver it again.
func ExampleTerminalError() {
	job := twice.Job{
		Name:   "cancelled order",
		Schema: pgfixture.SQL(`CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL)`),
		Seed:   twice.SeedSQL(`INSERT INTO orders VALUES (9813, 'cancelled')`),
		Run: func(ctx context.Context, a *twice.Attempt) error {
			var status string
			if err := a.Pool.QueryRow(ctx, `SELECT status FROM orders WHERE id = 9813`).Scan(&status); err != nil {
				return err
			}
			return fmt.Errorf("order 9813 is %s: %w", status, errSkip)
		},
	}
	rep := twice.Check(context.Background(), job,
		twice.TerminalError(func(err error) bool { return errors.Is(err, errSkip) }))
	fmt.Println(rep)
	// Output: twice: cancelled order: idempotent in 10 scenarios (sequential, crash@1, crash@end, duplicate-enqueue, overlap@1, concurrent:A2B2, concurrent:ABAB, concurrent:BA2B, concurrent:BABA, concurrent:B2A2)
}

// errLater is a queue's "deliver me later", as River's JobSnooze.
var errLater = errors.New("not yet")

// A snooze is a delivery, not a failure: the job is delivered again and
// the attempt is not counted against MaxDeliveries.
func ExampleSnoozeError() {
	_ = twice.SnoozeError(func(err error) bool { return errors.Is(err, errLater) })
}

// The job deletes its queue row in its own transaction, with its work (a
// queue like gue): once that committed, no scenario delivers it again, and
// the increment is safe.
func ExampleAckInJobTransaction() {
	job := twice.Job{
		Name: "points in the job's transaction",
		Schema: pgfixture.SQL(`CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE queue (job_id text PRIMARY KEY);`),
		Seed: twice.SeedSQL(`INSERT INTO customers VALUES (77, 0)`),
		Run: func(ctx context.Context, a *twice.Attempt) error {
			return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
				tag, err := tx.Exec(ctx, `DELETE FROM queue WHERE job_id = $1`, a.JobID)
				if err != nil || tag.RowsAffected() == 0 {
					return err // acknowledged already
				}
				_, err = tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
				return err
			})
		},
	}
	enqueue := func(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (string, error) {
		if d.Number == 1 {
			_, err := db.Exec(ctx, `INSERT INTO queue VALUES ($1)`, d.JobID)
			return "", err
		}
		return "", nil
	}
	acked := func(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (bool, error) {
		var gone bool
		err := db.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM queue WHERE job_id = $1)`, d.JobID).Scan(&gone)
		return gone, err
	}
	rep := twice.Check(context.Background(), job,
		twice.QueueBookkeeping(enqueue, nil), twice.AckInJobTransaction(acked),
		twice.WithoutDuplicateEnqueue("one queue row per order"), twice.WithoutConcurrency("shown elsewhere"),
		twice.EveryCrashPoint()) // every crash point, even those that leave the same world

	fmt.Println(rep.OK(), rep.Tokens())
	// Output: true [sequential crash@1 crash@2 crash@3 crash@4 crash@end]
}

// QueueBookkeeping keeps the queue's rows; a fetch that returns a reason
// tells the check the queue would not deliver the job now.
func ExampleQueueBookkeeping() {
	_ = twice.QueueBookkeeping(
		func(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (string, error) {
			return "", nil // claim the job's row
		},
		func(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) error {
			return nil // the queue's ack: mark the row done (d.Err says how it ended)
		})
}

// QueueWords puts the queue's words on the findings' headlines.
func ExampleQueueWords() {
	_ = twice.QueueWords(func(s twice.Scenario, generic string) string {
		if s.Kind == twice.CrashAfterLast {
			return strings.Replace(generic, "before the ack", "before the broker got the ack", 1)
		}
		return generic
	})
}

// QueueWordsOf words the headline from what happened in the scenario, so
// that it never contradicts the timeline.
func ExampleQueueWordsOf() {
	_ = twice.QueueWordsOf(func(s twice.Scenario, h twice.Happened, generic string) string {
		if h.AckCommitted {
			return generic + " (the job's ack had committed with its work: it was not delivered again)"
		}
		return generic
	})
}

// QueueLabels names the queue library's own statements on timelines.
func ExampleQueueLabels() {
	_ = twice.QueueLabels(func(label string) string {
		if label == "-- name: JobSetStateIfRunningMany :many" {
			return "river.JobCompleteTx"
		}
		return label
	})
}

// NoteStatements lets a queue adapter say what its library's statements
// are for (here, in River insert middleware: the kinds inserted); its
// QueueLabels then names them.
func ExampleNoteStatements() {
	ctx := twice.NoteStatements(context.Background(), "kinds points_email")
	_ = ctx // the library's statements run on ctx: "-- name: JobInsertFastMany :many · kinds points_email"
}
