package twice

import (
	"context"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/queue"
)

// deliverReference plays the reference run (internal/queue): one clean
// delivery of job-1 and, while it snoozes, the deliveries that follow.
func (c *checker) deliverReference(ctx context.Context, sr *ScenarioRun, wait func(context.Context, faults.Step) error) {
	c.cfg.queue.Reference(c.cfg.MaxDeliveries, func(offset int) queue.Attempt {
		rec := c.runAttempt(ctx, job1, c.next(sr, job1), inject.Plan{Wait: wait, Offset: offset}, false)
		sr.Attempts = append(sr.Attempts, rec)
		return rec.queued()
	})
}

// referencePoints are the points of the reference run, numbered across its
// deliveries.
func referencePoints(ref *ScenarioRun) []faults.Step {
	return queue.ReferencePoints(queued(ref.Attempts), job1)
}

// lastDelivery is the delivery of job1 that ended the job in a clean run
// (internal/queue).
func lastDelivery(sr *ScenarioRun) AttemptRecord {
	if i := queue.LastDelivery(queued(sr.Attempts), job1); i >= 0 {
		return sr.Attempts[i]
	}
	return AttemptRecord{}
}
