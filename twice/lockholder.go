package twice

import (
	"slices"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessions"
)

// A lock an attempt waits for past AttemptTimeout is named after its holder
// by internal/sessions, with no PID.

// ranAttempt is an attempt started in the current scenario, for naming a
// lock's holder: its name, its run (whose points record their backends) and
// where it ran (sessionstate.go).
type ranAttempt = sessions.Ran

// noteRan records an attempt started in the current scenario on worker w.
func (c *checker) noteRan(name string, run *inject.Run, w *inject.Worker) {
	c.mu.Lock()
	c.ran = append(c.ran, ranAttempt{Name: name, Run: run, Worker: w})
	c.mu.Unlock()
}

// lockHolder names who holds the lock the attempt's latest statement waits
// for in PostgreSQL, or "" when it waits for none (or the check cannot
// tell). It is asked before the attempt is crashed: the crash ends the
// wait.
func (ra *runningAttempt) lockHolder() string {
	return sessions.LockHolder(ra.c.db.Pool(), ra.run, func(pid uint32, app string) string {
		return ra.c.holderName(ra.run, pid, app)
	})
}

// holderName names the session pid (application_name app) that holds a
// lock waiter waits for.
func (c *checker) holderName(waiter *inject.Run, pid uint32, app string) string {
	c.mu.Lock()
	ran := slices.Clone(c.ran)
	c.mu.Unlock()
	return sessions.HolderName(ran, waiter, pid, app, ownSessionNames)
}

// lockWaitProblem says that attempt a was still waiting for a lock after
// bound, who held it, and what ends such a wait (sessions.LockWaitText).
func lockWaitProblem(a AttemptRecord, bound string) Problem {
	n := len(a.Points)
	s := sessions.LockWaitText(attemptName(a), bound, n, a.Points[n-1].Label, a.LockHolder)
	return Problem{Kind: ProblemSlow, Attempt: attemptName(a), Text: s}
}
