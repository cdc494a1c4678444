package twice

import (
	"github.com/twicekit/twicekit/internal/queue"
)

// LeaseQueue declares the runner a queue with a lease, the default: a
// delivery is leased for a visibility timeout, and a job whose lease ran out
// is delivered again, even while the first delivery still runs. Every
// scenario plays: redeliveries after an ack lost or a crash, a duplicate
// enqueue, and two deliveries of one job at once. A report whose findings
// include such an overlap says that it assumed a lease, and names the
// other runners.
func LeaseQueue() Option {
	return optionFunc(func(c *config) { c.Runner = queue.LeaseQueue })
}

// LockingConsumer declares the runner a consumer that holds a row lock
// until its ack: a SQL subscriber holding its offset row FOR UPDATE, or a
// job table claimed FOR UPDATE in the work's transaction. It never runs
// one job twice at once, so the overlaps and interleavings of one job do
// not play. It can still get a duplicate: the duplicate enqueue and the
// two copies at once still play.
func LockingConsumer() Option {
	return optionFunc(func(c *config) {
		c.Runner = queue.LockingConsumer
		c.Conc.OverlapsOff = queue.LockingNoOverlap
	})
}

// InProcessScheduler declares the runner a scheduler in one process (a
// cron library): it neither starts a run while the last one runs nor
// enqueues a run twice, and its retry is the next scheduled run. The
// concurrent scenarios and the duplicate enqueue do not play; the headlines
// say "the next scheduled run" where a queue's say "redelivery".
func InProcessScheduler() Option {
	return optionFunc(func(c *config) {
		c.Runner = queue.InProcessScheduler
		c.Conc.Off = queue.SchedulerNoOverlap
		c.DupEnqueueOff = queue.SchedulerNoDup
	})
}

// leaseHint says, in a finding of two deliveries of one job at once under
// the default runner and twice's own words, that the scenario assumed a
// lease (internal/queue).
func (c *config) leaseHint(s Scenario) string {
	return c.Runner.LeaseHint(s.Kind == Overlap || s.Kind == Interleaved, c.queue.describe == nil)
}
