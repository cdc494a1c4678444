package twice_test

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

var outboxSchema = pgfixture.SQL(`
CREATE TABLE outbox (
  id        bigint  PRIMARY KEY,
  amount    int     NOT NULL,
  published boolean NOT NULL DEFAULT false
);`)

// publishOutbox is an outbox publisher run on a schedule, with no retries
// of its own: it pays out every pending event, then marks it published;
// what a crash leaves pending the next run picks up. keyed sends each
// payout under an Idempotency-Key made from the event, so that the next run
// paying an event again is the same payout; without it the provider pays
// twice.
func publishOutbox(keyed bool) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		rows, err := a.Pool.Query(ctx, `SELECT id, amount FROM outbox WHERE NOT published ORDER BY id`)
		if err != nil {
			return err
		}
		type event struct{ id, amount int64 }
		var pending []event
		for rows.Next() {
			var e event
			if err := rows.Scan(&e.id, &e.amount); err != nil {
				rows.Close()
				return err
			}
			pending = append(pending, e)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, e := range pending {
			key := ""
			if keyed {
				key = fmt.Sprintf("outbox-%d", e.id)
			}
			if err := stripePost(ctx, a, "/v1/payouts", key, url.Values{"amount": {fmt.Sprint(e.amount)}, "currency": {"usd"}}); err != nil {
				return err
			}
			if _, err := a.Pool.Exec(ctx, `UPDATE outbox SET published = true WHERE id = $1`, e.id); err != nil {
				return err
			}
		}
		return nil
	}
}

func outboxJob(keyed bool) twice.Job {
	return twice.Job{Name: "publish the outbox", Schema: outboxSchema, Run: publishOutbox(keyed),
		Seed: twice.SeedSQL(`INSERT INTO outbox (id, amount) VALUES (41, 1200)`)}
}

// outboxOptions: no retries of its own, and a scheduler that never starts
// a run while the last one runs.
var outboxOptions = []twice.Option{twice.MaxDeliveries(1), twice.WithoutConcurrency("the scheduler starts the next run only after the last one ended")}

// Its next run is the keyed publisher's retry: declared periodic it passes
// every scenario; undeclared, every crash is a give-up. The publisher
// without a key pays the event again on its next run, and is flagged.
func TestPeriodicPublisherIsRetriedByItsNextRun(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, outboxJob(true), append(outboxOptions, twice.Periodic(time.Minute))...)
	require.Empty(t, tokens, rep.String())
	require.Equal(t, "next-run", rep.Reference.Attempts[1].JobID)
	js, err := rep.JSON()
	require.NoError(t, err)
	require.Contains(t, string(js), `"periodic": "1m"`)

	rep, tokens = findingTokens(t, outboxJob(true), outboxOptions...)
	require.Contains(t, tokens, "crash@1", rep.String())
	require.Equal(t, twice.ProblemGaveUp, rep.Findings[0].Problems[0].Kind)

	rep, tokens = findingTokens(t, outboxJob(false), append(outboxOptions, twice.Periodic(time.Minute))...)
	require.Contains(t, tokens, "crash-after@2", rep.String())
	var f *twice.Finding
	for i := range rep.Findings {
		if rep.Findings[i].Token == "crash-after@2" {
			f = &rep.Findings[i]
		}
	}
	require.Equal(t, "not idempotent: crash after point 2 of 3 was applied (payment POST /v1/payouts (no Idempotency-Key)), before the job heard back; the queue did not deliver it again (MaxDeliveries), then the next scheduled run (Periodic)", f.Headline)
	require.Contains(t, f.Timeline, "attempt 1 of next-run")
	require.Empty(t, f.Problems, "the next run recovered the give-up")
}

// nightly is a schedule that is no interval: every day at 03:00 UTC.
func nightly(t time.Time) time.Time {
	n := time.Date(t.Year(), t.Month(), t.Day(), 3, 0, 0, 0, time.UTC)
	if !n.After(t) {
		n = n.AddDate(0, 0, 1)
	}
	return n
}

// A schedule's next run is played at the schedule's next time on the
// check's clock (the clock starts at 09:00, so 03:00 is 18 hours on), and
// the outbox publisher's verdicts are those of the interval: the keyed one
// is recovered, the one without a key is flagged by its next run.
func TestPeriodicScheduleRunsAtItsNextTime(t *testing.T) {
	t.Parallel()
	var (
		mu sync.Mutex
		at []time.Time
	)
	job := outboxJob(true)
	run := job.Run
	job.Run = func(ctx context.Context, a *twice.Attempt) error {
		if a.JobID == "next-run" {
			mu.Lock()
			at = append(at, a.Now())
			mu.Unlock()
		}
		return run(ctx, a)
	}
	rep, tokens := findingTokens(t, job, append(outboxOptions, twice.PeriodicSchedule(nightly))...)
	require.Empty(t, tokens, rep.String())
	js, err := rep.JSON()
	require.NoError(t, err)
	require.Contains(t, string(js), `"periodic": "18h"`)
	require.NotEmpty(t, at)
	for _, ts := range at {
		require.Equal(t, "03:00", ts.Format("15:04"), "every next run is at the schedule's time")
	}

	rep, tokens = findingTokens(t, outboxJob(false), append(outboxOptions, twice.PeriodicSchedule(nightly))...)
	require.Contains(t, tokens, "crash-after@2", rep.String())
}

// A queue's hooks get the check's clock at each delivery (Delivery.Now):
// the first run's at the clock's start, the next scheduled run's at its
// time, so a queue can build that run's input as its scheduler would then.
func TestDeliveryNowIsTheNextRunsTime(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	fetched, settled := map[string]time.Time{}, map[string]time.Time{}
	job := twice.Job{
		Name:   "delivery_now",
		Schema: outboxSchema,
		Run:    func(ctx context.Context, a *twice.Attempt) error { return nil },
	}
	rep := twice.Check(t.Context(), job, twice.Periodic(15*time.Minute), twice.Only("sequential"),
		twice.QueueBookkeeping(func(_ context.Context, _ *pgxpool.Pool, d twice.Delivery) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			fetched[d.JobID] = d.Now
			return "", nil
		}, func(_ context.Context, _ *pgxpool.Pool, d twice.Delivery) error {
			mu.Lock()
			defer mu.Unlock()
			settled[d.JobID] = d.Now
			return nil
		}))
	require.NoError(t, rep.Err)
	require.True(t, rep.OK(), "%s", rep)
	start := time.Date(2026, time.October, 12, 9, 0, 0, 0, time.UTC)
	want := map[string]time.Time{"job-1": start, "next-run": start.Add(15 * time.Minute)}
	require.Equal(t, want, fetched, "the fetch hook's Delivery.Now")
	require.Equal(t, want, settled, "the settle hook's Delivery.Now")
}
