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
