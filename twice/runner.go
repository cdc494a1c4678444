package twice

import (
	"strings"
)

// runner is how the application delivers the job: the runner's delivery
// model decides which scenarios can happen and the words of their
// headlines.
type runner int

const (
	// leaseQueue: a queue that leases a delivery for a visibility timeout
	// and delivers it again when the lease runs out (the default).
	leaseQueue runner = iota
	// lockingConsumer: a consumer that holds a row lock until its ack.
	lockingConsumer
	// inProcessScheduler: a scheduler in one process (a cron library).
	inProcessScheduler
)

// The reasons the runners print for the scenarios they cannot play.
const (
	lockingNoOverlap   = "a locking consumer (twice.LockingConsumer) holds the job's row lock until its ack, so it never runs one job twice at once"
	schedulerNoOverlap = "an in-process scheduler (twice.InProcessScheduler) never starts a run while the last one runs"
	schedulerNoDup     = "an in-process scheduler (twice.InProcessScheduler) never enqueues a run twice"
)

// LeaseQueue declares the runner a queue with a lease, the default: a
// delivery is leased for a visibility timeout, and a job whose lease ran out
// is delivered again, even while the first delivery still runs. Every
// scenario plays: redeliveries after an ack lost or a crash, a duplicate
// enqueue, and two deliveries of one job at once. A report whose findings
// include such an overlap says that it assumed a lease, and names the
// other runners.
func LeaseQueue() Option {
	return optionFunc(func(c *config) { c.runner = leaseQueue })
}

// LockingConsumer declares the runner a consumer that holds a row lock
// until its ack: a SQL subscriber holding its offset row FOR UPDATE, or a
// job table claimed FOR UPDATE in the work's transaction. It never runs
// one job twice at once, so the overlaps and interleavings of one job do
// not play. It can still get a duplicate: the duplicate enqueue and the
// two copies at once still play.
func LockingConsumer() Option {
	return optionFunc(func(c *config) {
		c.runner = lockingConsumer
		c.conc.overlapsOff = lockingNoOverlap
	})
}

// InProcessScheduler declares the runner a scheduler in one process (a
// cron library): it neither starts a run while the last one runs nor
// enqueues a run twice, and its retry is the next scheduled run. The
// concurrent scenarios and the duplicate enqueue do not play; the headlines
// say "the next scheduled run" where a queue's say "redelivery".
func InProcessScheduler() Option {
	return optionFunc(func(c *config) {
		c.runner = inProcessScheduler
		c.conc.off = schedulerNoOverlap
		c.dupEnqueueOff = schedulerNoDup
	})
}

// String is the runner as the JSON report names it.
func (r runner) String() string {
	switch r {
	case lockingConsumer:
		return "locking consumer"
	case inProcessScheduler:
		return "in-process scheduler"
	}
	return "lease queue"
}

// schedulerWords are the queue's words of a headline and the scheduler's.
var schedulerWords = strings.NewReplacer(
	"sequential: the ack was lost and the same job was delivered again", "the next scheduled run: the job ran again after a run that succeeded",
	"crash before point", "the process died before point",
	"crash after the last point", "the process died after the last point",
	", before the ack, then redelivery", ", before the run was marked done, then the next scheduled run",
	", the last before the ack, then redelivery", ", the last before the run was marked done, then the next scheduled run",
	", then redelivery", ", then the next scheduled run",
)

// words says a headline in the runner's words.
func (r runner) words(headline string) string {
	if r == inProcessScheduler {
		return schedulerWords.Replace(headline)
	}
	return headline
}

// leaseHint says, in a finding of two deliveries of one job at once under
// the default runner and twice's own words, that the scenario assumed a
// lease, and names the other runners ("" otherwise).
func (c *config) leaseHint(s Scenario) string {
	if c.runner != leaseQueue || c.queue.describe != nil || (s.Kind != Overlap && s.Kind != Interleaved) {
		return ""
	}
	return "two deliveries of one job at once assume a queue with a lease (twice.LeaseQueue, the default): its visibility timeout ran out while the first delivery still ran. " +
		"A runner that holds a row lock until its ack never does that: declare it with twice.LockingConsumer(); " +
		"an in-process scheduler neither overlaps a run nor enqueues it twice: twice.InProcessScheduler()"
}
