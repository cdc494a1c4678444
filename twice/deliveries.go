package twice

import (
	"context"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
)

// deliverReference plays the reference run: one clean delivery of job-1 and,
// while it snoozes (SnoozeError), the deliveries that follow, until one does
// not snooze or MaxDeliveries snoozed. Their points are numbered across the
// deliveries, as a scenario's faults count them.
func (c *checker) deliverReference(ctx context.Context, sr *ScenarioRun, wait func(context.Context, faults.Step) error) {
	offset := 0
	for i := 0; i < c.cfg.maxDeliveries; i++ {
		rec := c.runAttempt(ctx, job1, c.next(sr, job1), inject.Plan{Wait: wait, Offset: offset}, false)
		sr.Attempts = append(sr.Attempts, rec)
		if rec.Panic != "" || rec.Goexit != "" || rec.Hung || !c.snoozed(rec) {
			return
		}
		offset += len(rec.Points)
	}
}

// referencePoints are the points of the reference run, numbered across its
// deliveries.
func referencePoints(ref *ScenarioRun) []faults.Step {
	var out []faults.Step
	for _, a := range ref.Attempts {
		if a.JobID == job1 {
			out = append(out, a.Points...)
		}
	}
	return out
}

// lastDelivery is the delivery of job1 that ended the job in a clean run:
// the last of its deliveries (those before it snoozed), before any next
// scheduled run (periodic.go).
func lastDelivery(sr *ScenarioRun) AttemptRecord {
	var last AttemptRecord
	for _, a := range sr.Attempts {
		if a.JobID == job1 {
			last = a
		}
	}
	return last
}

// sameDeliveries reports whether a second clean run delivered as the first
// did (as many deliveries, and a next scheduled run that succeeded where
// the first had one), so that its values can be compared with the first's.
func sameDeliveries(ref, again *ScenarioRun) bool {
	if len(again.Attempts) != len(ref.Attempts) {
		return false
	}
	for _, a := range again.Attempts {
		if a.JobID == jobNext && a.Err != nil {
			return false
		}
	}
	return true
}
