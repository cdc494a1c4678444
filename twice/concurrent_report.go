package twice

import (
	"fmt"
	"time"

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
	if h, ok := it.held[i]; ok {
		return fmt.Sprintf("STUCK (on %s, held by %s's session after it returned)", h.What, letterList(it.stuck.Positions[i].On))
	}
	return "STUCK (outside PostgreSQL)"
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

// heldLocks names, for each stuck attempt blocked in PostgreSQL only on
// attempts that had returned, the lock it waits for; asked before the check
// crashes it (the crash ends the wait).
func heldLocks(e *sched.StuckError, ras []*runningAttempt) map[int]heldLock {
	held := map[int]heldLock{}
	for _, i := range e.Stuck {
		if i >= len(e.Positions) || i >= len(ras) || ras[i] == nil {
			continue
		}
		p := e.Positions[i]
		if p.State != sched.StateBlocked || len(p.On) == 0 {
			continue
		}
		returned := true
		for _, j := range p.On {
			returned = returned && j < len(e.Positions) && e.Positions[j].State == sched.StateReturned
		}
		if !returned {
			continue
		}
		if h, ok := ras[i].heldLock(); ok {
			held[i] = h
		}
	}
	return held
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
