package twice

import (
	"fmt"
	"time"

	"github.com/twicekit/twicekit/internal/concurrentplay"
	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/internal/sched"
)

// interleaving is what the scheduler did in one concurrent scenario.
type interleaving struct {
	trace     *sched.Trace
	isolation IsolationLevel
	stuck     *sched.StuckError
	held      map[int]heldLock // the stuck attempts that waited on a lock of one that returned (lockholder.go)
}

// stuckNote is the timeline's word for stuck attempt i.
func (it *interleaving) stuckNote(i int) string {
	return concurrentplay.StuckNote(it.held, it.stuck, i)
}

// outcome is how an attempt ended, in the words of the sequential timeline.
func outcome(a AttemptRecord) string {
	switch a.End() {
	case EndPanic:
		return "panicked"
	case EndGoexit:
		return "called t.FailNow (runtime.Goexit)"
	case EndHung:
		return "hung"
	case EndCrashed, EndCrashedBeforeAck:
		if a.CrashAt.Index > 0 {
			return fmt.Sprintf("CRASH before %d %s", a.CrashAt.Index, a.CrashAt.Label)
		}
		return fmt.Sprintf("CRASH (%s)", a.Reason)
	case EndError:
		return "returned error: " + oneLine(a.Err.Error())
	}
	return "done" // returned, or not delivered
}

// attemptNames are the names of a concurrent scenario's attempts, in
// letter order.
func attemptNames(recs []AttemptRecord) []string {
	names := make([]string, len(recs))
	for i, r := range recs {
		names[i] = attemptName(r)
	}
	return names
}

// stuckProblem says which attempts were stuck and where every attempt was
// (internal/report/stuck.go).
func stuckProblem(e *sched.StuckError, recs []AttemptRecord, after time.Duration) Problem {
	return Problem{Kind: ProblemStuck, Text: report.StuckText(e, attemptNames(recs), after)}
}

// heldLockProblem says that the stuck attempts waited in PostgreSQL for a
// lock that the session of an attempt that had returned still held
// (internal/report/stuck.go).
func heldLockProblem(e *sched.StuckError, held map[int]heldLock, recs []AttemptRecord, after time.Duration) Problem {
	return Problem{Kind: ProblemStuck, Text: report.HeldLockText(e, held, attemptNames(recs), after)}
}

func letterList(is []int) string { return report.Letters(is) }

// Timeline returns the timeline of the scenario with this token among those
// that ran, whether or not it broke a promise (a passing interleaving can be
// worth reading too); false when no such scenario ran.
func (r *Report) Timeline(token string) (string, bool) {
	for _, sr := range r.Scenarios {
		if sr.Scenario.Token() == token {
			return timeline(sr), true
		}
	}
	return "", false
}
