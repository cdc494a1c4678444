package twicetemporal_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/twicekit/twicekit/internal/outboxtest"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twicetemporal"
)

// Outbox is an activity a Temporal Schedule runs, with MaximumAttempts 1
// ("the next run picks up what is still pending"): it pays out the first
// pending event, then marks it published. Keyed sends the payout under an
// Idempotency-Key made from the event.
type Outbox struct {
	A     *twice.Attempt
	Keyed bool
	Seen  func(workflowID string)
}

func (o *Outbox) Publish(ctx context.Context) error {
	if o.Seen != nil {
		o.Seen(activity.GetInfo(ctx).WorkflowExecution.ID)
	}
	return outboxtest.PublishFirst(ctx, o.A, o.Keyed)
}

func outboxActivity(keyed bool, spec *client.ScheduleSpec, seen func(string)) twicetemporal.Activity {
	return twicetemporal.Activity{
		Schema:     outboxtest.Schema,
		Seed:       outboxtest.Seed,
		Options:    workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}},
		WorkflowID: "outbox",
		Schedule:   spec,
		Activity:   func(a *twice.Attempt) any { return (&Outbox{A: a, Keyed: keyed, Seen: seen}).Publish },
	}
}

// Every 6 hours, offset by 30 minutes: from the check's clock start
// (2026-10-12 09:00 UTC) the next time is 12:30.
var everySixHours = &client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: 6 * time.Hour, Offset: 30 * time.Minute}}}

// An activity a Schedule runs with one attempt is retried by the
// Schedule's next run, a new workflow: given the spec, the keyed publisher
// passes, and the next run's workflow ID carries its scheduled time;
// without it, a crash is Temporal giving up; the publisher without a key
// pays twice once its next run comes.
func TestScheduledActivityIsRetriedByItsNextRun(t *testing.T) {
	t.Parallel()
	var (
		mu  sync.Mutex
		ids = map[string]bool{}
	)
	seen := func(id string) { mu.Lock(); ids[id] = true; mu.Unlock() }
	rep := check(t, outboxActivity(true, everySixHours, seen))
	if !rep.OK() {
		t.Fatalf("the keyed publisher with its Schedule:\n%s", rep)
	}
	if js, _ := rep.JSON(); !strings.Contains(string(js), `"periodic": "210m"`) {
		t.Errorf("the JSON report does not put the next run at 12:30 (3h30m on):\n%s", js)
	}
	if !ids["outbox-2026-10-12T12:30:00Z"] || !ids["outbox"] {
		t.Errorf("workflow IDs seen: %v; want the first run's (outbox) and the next run's (outbox-2026-10-12T12:30:00Z)", ids)
	}

	rep = check(t, outboxActivity(true, nil, nil))
	if rep.OK() {
		t.Fatalf("the keyed publisher without its Schedule is expected to be flagged (Temporal gives up):\n%s", rep)
	}

	rep = check(t, outboxActivity(false, everySixHours, nil))
	if rep.OK() {
		t.Fatalf("the publisher without a key is expected to be flagged:\n%s", rep)
	}
	if !strings.Contains(rep.String(), "then the next scheduled run") {
		t.Errorf("no finding says the next scheduled run paid again:\n%s", rep)
	}
}

// A spec the check cannot evaluate is refused before anything runs, with
// what to do instead.
func TestAScheduleSpecWithCalendarsIsRefused(t *testing.T) {
	t.Parallel()
	rep := twicetemporal.Check(t.Context(), outboxActivity(true, &client.ScheduleSpec{CronExpressions: []string{"0 3 * * *"}}, nil))
	want := "twicetemporal: Activity.Schedule: only Intervals are read (Calendars, CronExpressions and Skip are evaluated by Temporal's server); give the next run's time yourself with twice.PeriodicSchedule(next)"
	if rep.Err == nil || rep.Err.Error() != want {
		t.Fatalf("err = %v, want %q", rep.Err, want)
	}
}
