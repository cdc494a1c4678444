package twice

import (
	"github.com/twicekit/twicekit/internal/sessions"
)

// A lock an attempt waits for past AttemptTimeout is named after its holder
// by internal/sessions, with no PID (internal/checkstate asks it).

// lockWaitProblem says that attempt a was still waiting for a lock after
// bound, who held it, and what ends such a wait (sessions.LockWaitText).
func lockWaitProblem(a AttemptRecord, bound string) Problem {
	n := len(a.Points)
	s := sessions.LockWaitText(attemptName(a), bound, n, a.Points[n-1].Label, a.LockHolder)
	return Problem{Kind: ProblemSlow, Attempt: attemptName(a), Text: s}
}
