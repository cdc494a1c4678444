package twice

import (
	"fmt"

	"github.com/twicekit/twicekit/internal/concurrentplay"
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
