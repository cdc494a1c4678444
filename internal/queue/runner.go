package queue

import "strings"

// Runner is how the application delivers the job: the runner's delivery
// model decides which scenarios can happen and the words of their
// headlines.
type Runner int

const (
	// LeaseQueue: a queue that leases a delivery for a visibility timeout
	// and delivers it again when the lease runs out (the default).
	LeaseQueue Runner = iota
	// LockingConsumer: a consumer that holds a row lock until its ack.
	LockingConsumer
	// InProcessScheduler: a scheduler in one process (a cron library).
	InProcessScheduler
)

// The reasons the runners print for the scenarios they cannot play.
const (
	LockingNoOverlap   = "a locking consumer (twice.LockingConsumer) holds the job's row lock until its ack, so it never runs one job twice at once"
	SchedulerNoOverlap = "an in-process scheduler (twice.InProcessScheduler) never starts a run while the last one runs"
	SchedulerNoDup     = "an in-process scheduler (twice.InProcessScheduler) never enqueues a run twice"
)

// String is the runner as the JSON report names it.
func (r Runner) String() string {
	switch r {
	case LockingConsumer:
		return "locking consumer"
	case InProcessScheduler:
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

// Words says a headline in the runner's words.
func (r Runner) Words(headline string) string {
	if r == InProcessScheduler {
		return schedulerWords.Replace(headline)
	}
	return headline
}

// LeaseHint says, in a finding of two deliveries of one job at once
// (overlap) under the default runner and twice's own words, that the
// scenario assumed a lease, and names the other runners ("" otherwise).
func (r Runner) LeaseHint(overlap, ownWords bool) string {
	if r != LeaseQueue || !ownWords || !overlap {
		return ""
	}
	return "two deliveries of one job at once assume a queue with a lease (twice.LeaseQueue, the default): its visibility timeout ran out while the first delivery still ran. " +
		"A runner that holds a row lock until its ack never does that: declare it with twice.LockingConsumer(); " +
		"an in-process scheduler neither overlaps a run nor enqueues it twice: twice.InProcessScheduler()"
}
