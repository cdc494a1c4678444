package twiceasynq

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/twicekit/twicekit/internal/outboxtest"
	"github.com/twicekit/twicekit/twice"
)

// publishOutbox is an asynq periodic task's handler: it pays out the first
// pending outbox event, then marks it published; with MaxRetry(0), what a
// crash leaves pending is picked up by the scheduler's next run. keyed
// sends the payout under an Idempotency-Key made from the event.
func publishOutbox(a *twice.Attempt, keyed bool) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		return outboxtest.PublishFirst(ctx, a, keyed)
	})
}

func outboxJob(keyed bool, cronspec string) Job {
	return Job{
		Schema:   outboxtest.Schema,
		Seed:     outboxtest.Seed,
		Task:     asynq.NewTask("outbox:publish", nil, asynq.MaxRetry(0)),
		Cronspec: cronspec,
		Handler:  func(a *twice.Attempt) asynq.Handler { return publishOutbox(a, keyed) },
	}
}

// A periodic task with no retries is retried by the scheduler's next run:
// given its cronspec, the keyed publisher passes, and its next run is at
// the cronspec's time (the check's clock starts at 09:00 UTC; "30 4 * * *"
// is 04:30, in the scheduler's location); without it, a crash is asynq
// archiving the task; the publisher without a key pays twice once its
// next run comes.
func TestPeriodicTaskIsRetriedByItsNextRun(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), outboxJob(true, "30 4 * * *"))
	if rep.Err != nil || !rep.OK() {
		t.Fatalf("the keyed publisher with its cronspec:\n%s", rep)
	}
	js, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"periodic": "1170m"`) {
		t.Errorf("the JSON report does not put the next run at 04:30 the next day (19h30m on):\n%s", js)
	}
	berlin := outboxJob(true, "30 4 * * *")
	berlin.SchedulerLocation = time.FixedZone("UTC+2", 2*60*60)
	if js, _ := Check(t.Context(), berlin).JSON(); !strings.Contains(string(js), `"periodic": "1050m"`) {
		t.Errorf("the cronspec's time is not read in the scheduler's location:\n%s", js)
	}

	rep = Check(t.Context(), outboxJob(true, ""))
	if rep.Err != nil || rep.OK() {
		t.Fatalf("the keyed publisher without its cronspec is expected to be flagged (asynq archives it):\n%s", rep)
	}

	rep = Check(t.Context(), outboxJob(false, "@every 1h"))
	if rep.Err != nil || rep.OK() {
		t.Fatalf("the publisher without a key is expected to be flagged:\n%s", rep)
	}
	if !strings.Contains(rep.String(), "then the next scheduled run") {
		t.Errorf("no finding says the next scheduled run paid again:\n%s", rep)
	}
}

// A cronspec asynq's scheduler would refuse fails the check's clean run,
// naming the field and the parser's complaint.
func TestACronspecAsynqRefusesFailsTheCleanRun(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), outboxJob(true, "every hour"))
	if rep.OK() {
		t.Fatalf("a bad cronspec passed:\n%s", rep)
	}
	if !strings.Contains(rep.String(), `twiceasynq: Job.Cronspec "every hour" is not a cronspec asynq's Scheduler.Register takes`) {
		t.Errorf("the report does not name the cronspec:\n%s", rep)
	}
}
