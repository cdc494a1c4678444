package twice

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessionstate"
)

// A scenario's first delivery starts on fresh sessions (freshsessions.go);
// its redeliveries reuse the worker's sessions, as a pooled production
// connection would. Before a redelivery starts on a worker an earlier
// delivery of the scenario ran on, the check reads, on each idle session
// of that worker, what a session keeps across transactions: temporary
// tables, session advisory locks, parameters SET for the session, statements
// made with SQL PREPARE and channels it LISTENs on. What an earlier delivery
// left there (not what the application's AfterConnect set up) goes on the
// redelivery's record (AttemptRecord.SessionState), and a finding whose
// redelivery ran on such a session says so among its hints. The text names
// the state and the attempts, never a PID or a temporary schema's number.

// freshWorker ends the sessions of w when an attempt of the scenario ran
// there, and waits until PostgreSQL has ended them
// (FreshSessionsPerDelivery).
func (c *checker) freshWorker(ctx context.Context, w *inject.Worker) error {
	if !c.ranOn(w) {
		return nil // fresh already (freshsessions.go)
	}
	w.Fresh()
	name := w.Pool.Config().ConnConfig.RuntimeParams["application_name"]
	return c.waitSessionsEnded(ctx, []string{name}, "a worker of the check") // freshsessions.go
}

// ranOn reports whether an attempt of the current scenario ran on w.
func (c *checker) ranOn(w *inject.Worker) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.ran {
		if r.Worker == w {
			return true
		}
	}
	return false
}

// sessionState says what the earlier deliveries of the scenario left on
// the idle sessions of w, as a redelivery about to start there finds them
// (internal/sessionstate), or "" when they left nothing (or the check could
// not look).
func (c *checker) sessionState(ctx context.Context, w *inject.Worker) string {
	if !c.ranOn(w) {
		return "" // the first delivery on w: its sessions are fresh
	}
	return sessionstate.OnWorker(ctx, w, &c.setUp, c.usedSession, c.leftBy)
}

// usedSession reports whether an attempt of the current scenario ran a
// statement on backend pid, and whether one of them may have SET a
// parameter for the session.
func (c *checker) usedSession(pid uint32) (used, sets bool) {
	c.mu.Lock()
	ran := slices.Clone(c.ran)
	c.mu.Unlock()
	return sessionstate.Used(ran, pid)
}

// leftBy says which attempts of the current scenario left state on session
// pid, "" when none did (sessionstate.Left.By).
func (c *checker) leftBy(pid uint32, state []string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.left.By(c.ran, pid, state)
}

// joinAnd joins names with commas and a final "and".
func joinAnd(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// sessionStateHints say which attempts of a finding's scenario started on a
// session an earlier delivery had left state on, and what that means: one
// hint for the attempts that found the same state.
func sessionStateHints(sr *ScenarioRun) []string {
	var states []string
	by := map[string][]string{}
	for _, a := range sr.Attempts {
		if a.SessionState == "" {
			continue
		}
		if _, ok := by[a.SessionState]; !ok {
			states = append(states, a.SessionState)
		}
		by[a.SessionState] = append(by[a.SessionState], attemptName(a))
	}
	var hints []string
	for _, s := range states {
		hints = append(hints, fmt.Sprintf("%s started on a session where %s", joinAnd(by[s]), s))
	}
	if len(hints) > 0 {
		hints[len(hints)-1] += ": a production pool may hand a redelivery the session an earlier delivery used, or a fresh one, " +
			"so a job must not depend on what a delivery leaves on its session (a temporary table ON COMMIT DROP, pg_advisory_xact_lock, SET LOCAL, " +
			"DEALLOCATE what it PREPAREs, UNLISTEN what it LISTENs); twice.FreshSessionsPerDelivery() starts every delivery on fresh sessions, to tell whether that state is the cause"
	}
	return hints
}
