package report

import (
	"strings"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/sched"
)

// Run is a scenario's run as a report shows it.
type Run struct {
	// Attempts are the attempts in the order they started: the ones that
	// ran at once first, then the redeliveries and follow-ups.
	Attempts []Attempt
	// Interleaving is what the scheduler did in a concurrent scenario; nil
	// in a sequential one.
	Interleaving *Interleaving
}

// End is how an attempt ended, as far as a timeline tells them apart.
type End int

// How attempts end, for a timeline.
const (
	// Ended: any other end; Outcome says which.
	Ended End = iota
	// NotDelivered: the queue would not deliver it; Note says why.
	NotDelivered
	// CrashedBeforeAck: the job returned, then the check crashed it before
	// the ack.
	CrashedBeforeAck
	// Crashed: the check crashed the attempt.
	Crashed
)

// Attempt is one attempt as a report shows it.
type Attempt struct {
	// Name is "attempt N of JOB".
	Name string
	// Kind is a follow-up's kind; empty for a delivery of the job.
	Kind string
	// Points are the points the attempt reached, in order.
	Points []faults.Step
	// End is how it ended.
	End End
	// Outcome is how it ended, in the words of the timeline ("done",
	// "returned error: …", "CRASH before 3 INSERT …").
	Outcome string
	// CrashAt is the point the crash struck (Index 0: none).
	CrashAt faults.Step
	// Reason is why the check crashed it, when CrashAt is none.
	Reason string
	// Crashed: the check crashed it, whatever else it did.
	Crashed bool
	// Note is the queue's words, printed under the attempt.
	Note string
}

// Interleaving is what the scheduler did in one concurrent scenario.
type Interleaving struct {
	// Attempts is how many attempts ran at once.
	Attempts int
	// Events are the scheduler's events, in order.
	Events []sched.Event
	// Schedule is the token of the interleaving.
	Schedule string
	// Isolation is the transactions' isolation level.
	Isolation string
	// Stuck are the attempts the scheduler found stuck, in its order.
	Stuck []Stuck
}

// Stuck is an attempt that was stuck, with the timeline's word for it.
type Stuck struct {
	Attempt int
	Note    string
}

// together is how many of the run's attempts ran at once.
func (r Run) together() int {
	if r.Interleaving == nil {
		return 0
	}
	return min(r.Interleaving.Attempts, len(r.Attempts))
}

// Letters names attempts by their letters ("A and B").
func Letters(is []int) string {
	var ls []string
	for _, i := range is {
		ls = append(ls, concurrent.Letter(i))
	}
	return strings.Join(ls, " and ")
}

// Indent puts prefix before every line of s that is not empty.
func Indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
