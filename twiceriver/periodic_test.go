package twiceriver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/twicekit/twicekit/internal/outboxtest"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceriver"
)

// OutboxArgs are the args of a River periodic job: it has no input, every
// run publishes what is pending.
type OutboxArgs struct{}

func (OutboxArgs) Kind() string { return "publish_outbox" }

// outboxWorker pays out every pending outbox event, then marks it
// published; with one attempt only, what a crash leaves pending is picked
// up by the next periodic run. keyed sends each payout under an
// Idempotency-Key made from the event.
type outboxWorker struct {
	river.WorkerDefaults[OutboxArgs]
	a     *twice.Attempt
	keyed bool
}

func (w *outboxWorker) Work(ctx context.Context, _ *river.Job[OutboxArgs]) error {
	return outboxtest.PublishFirst(ctx, w.a, w.keyed)
}

func outboxJob(keyed bool, schedule river.PeriodicSchedule) twiceriver.Job[OutboxArgs] {
	return twiceriver.Job[OutboxArgs]{
		Schema: outboxtest.Schema,
		Seed:   outboxtest.Seed,
		// The app's periodic job: river.NewPeriodicJob(schedule, …,
		// &river.PeriodicJobOpts{…}) with MaxAttempts 1 on its args.
		InsertOpts: &river.InsertOpts{MaxAttempts: 1},
		Periodic:   schedule,
		Worker:     func(a *twice.Attempt) river.Worker[OutboxArgs] { return &outboxWorker{a: a, keyed: keyed} },
	}
}

// A River periodic job with one attempt is retried by its next run: given
// its schedule, the keyed publisher passes every scenario; without it, a
// crash is River giving up; the publisher without a key pays twice once
// its next run comes.
func TestPeriodicJobIsRetriedByItsNextRun(t *testing.T) {
	t.Parallel()
	rep := twiceriver.Check(t.Context(), outboxJob(true, river.PeriodicInterval(15*time.Minute)))
	if rep.Err != nil || !rep.OK() {
		t.Fatalf("the keyed publisher with its schedule:\n%s", rep)
	}
	js, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"periodic": "15m"`) {
		t.Errorf("the JSON report does not name the schedule's interval:\n%s", js)
	}

	rep = twiceriver.Check(t.Context(), outboxJob(true, nil))
	if rep.Err != nil || rep.OK() {
		t.Fatalf("the keyed publisher without its schedule is expected to be flagged (River gives up):\n%s", rep)
	}
	if !hasProblem(rep, twice.ProblemGaveUp) {
		t.Errorf("no give-up among the findings:\n%s", rep)
	}

	rep = twiceriver.Check(t.Context(), outboxJob(false, river.PeriodicInterval(15*time.Minute)))
	if rep.Err != nil || rep.OK() {
		t.Fatalf("the publisher without a key is expected to be flagged:\n%s", rep)
	}
	if !strings.Contains(rep.String(), "then the next scheduled run") {
		t.Errorf("no finding says the next scheduled run paid again:\n%s", rep)
	}
}

func hasProblem(rep *twice.Report, kind twice.ProblemKind) bool {
	for _, f := range rep.Findings {
		for _, p := range f.Problems {
			if p.Kind == kind {
				return true
			}
		}
	}
	return false
}
