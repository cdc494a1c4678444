package twicegue

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/vgarvardt/gue/v5"
	"github.com/vgarvardt/gue/v5/adapter/pgxv5"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The reward enqueues the customer's notification 30 s later in j.Tx(),
// on every copy of the job (gue has no uniqueness): a duplicate enqueue
// leaves two notifications. With WorkFollowUps the check works them with
// the WorkMap: the notification that posts once per order passes, the one
// that posts per job is flagged.

var notifySchema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL, status text NOT NULL);
CREATE TABLE rewarded_orders (order_id bigint PRIMARY KEY);
CREATE TABLE notified_orders (order_id bigint PRIMARY KEY);`)

const pointsNotice = "points_notice"

// rewardThenNotice rewards the order once, and enqueues the notice in
// j.Tx() on every copy.
func rewardThenNotice(pool *pgxpool.Pool) gue.WorkFunc { return rewardThenEnqueue(pool, pointsNotice) }

// rewardThenEnqueue rewards the order once and enqueues, in j.Tx(), a job
// of jobType with the same args 30 s later: it commits with gue's deletion
// of the job.
func rewardThenEnqueue(pool *pgxpool.Pool, jobType string) gue.WorkFunc {
	return func(ctx context.Context, j *gue.Job) error {
		if err := rewardOncePerOrder(ctx, j); err != nil {
			return err
		}
		client, err := gue.NewClient(pgxv5.NewConnPool(pool))
		if err != nil {
			return err
		}
		return client.EnqueueTx(ctx, &gue.Job{Type: jobType, Args: j.Args, RunAt: time.Now().Add(30 * time.Second)}, j.Tx())
	}
}

// notice posts the points to the CRM; once records the order in j.Tx()
// first and posts only for an order not yet notified.
func notice(a *twice.Attempt, once bool) gue.WorkFunc {
	return func(ctx context.Context, j *gue.Job) error {
		if once {
			tag, err := j.Tx().Exec(ctx, `INSERT INTO notified_orders VALUES (9812) ON CONFLICT DO NOTHING`)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
		}
		return a.Webhooks.Post(ctx, "https://crm.example/points", []byte(`{"customer":77,"points":50}`))
	}
}

func noticeJob(once, registered bool) Job {
	return Job{Schema: notifySchema, Seed: seed, Job: &gue.Job{Type: rewardType, Args: args(9812)}, WorkFollowUps: true,
		WorkMap: func(a *twice.Attempt) gue.WorkMap {
			wm := gue.WorkMap{rewardType: rewardThenNotice(a.Pool)}
			if registered {
				wm[pointsNotice] = notice(a, once)
			}
			return wm
		}}
}

var noticeOptions = []twice.Option{twice.WithoutConcurrency("the follow-ups are the subject here")}

func TestFollowUpsAreWorkedWithTheWorkMap(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), noticeJob(true, true), noticeOptions...)
	if !rep.OK() {
		t.Fatalf("the notice sent once per order was flagged:\n%s", rep)
	}
	if n := len(rep.Reference.Attempts); n != 2 || rep.Reference.Attempts[1].Name() != "attempt 1 of follow-up-1" {
		t.Fatalf("the reference run did not work the notice: %d attempts\n%s", n, rep)
	}

	rep = Check(t.Context(), noticeJob(false, true), append(noticeOptions, twice.Only("duplicate-enqueue"))...)
	if got := fmt.Sprint(findings(rep)); got != "[duplicate-enqueue]" {
		t.Fatalf("flagged by %s, want [duplicate-enqueue]:\n%s", got, rep)
	}
	f := rep.Findings[0]
	if !strings.HasSuffix(f.Headline, ", then the follow-ups it enqueued (follow-up-1: points_notice, follow-up-2: points_notice)") ||
		!strings.Contains(f.Timeline, "attempt 1 of follow-up-2 (points_notice):") || len(f.Effects) != 1 || len(f.Database) != 0 {
		t.Fatalf("the finding does not name the follow-ups or is not the second post:\n%s", rep)
	}

	// Not registered in the WorkMap: a row, and the report says so.
	rep = Check(t.Context(), noticeJob(true, false), append(noticeOptions, twice.Only("duplicate-enqueue"))...)
	if got := fmt.Sprint(findings(rep)); got != "[duplicate-enqueue]" || !strings.Contains(rep.String(), "follow-ups not worked (no worker registered for their kind; compared as the queue holds them): points_notice") {
		t.Fatalf("flagged by %s, want [duplicate-enqueue] and the note:\n%s", got, rep)
	}
}

// WorkFollowUps works the notice the reward enqueues with the WorkMap: the
// duplicate enqueue's two notices post once, as the clean run's one does.
func ExampleJob_workFollowUps() {
	rep := Check(context.Background(), noticeJob(true, true), twice.Only("duplicate-enqueue"))
	fmt.Println(rep)
	// Output: twice: reward: idempotent in 1 scenario (duplicate-enqueue)
}
