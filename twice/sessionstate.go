package twice

import (
	"context"
	"slices"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessionstate"
)

// What an earlier delivery of the scenario left on a worker's sessions is
// read before a redelivery starts there, and named in a finding's hints
// (internal/sessionstate).

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

// sessionStateHints say which attempts of a finding's scenario started on a
// session an earlier delivery had left state on (sessionstate.Hints).
func sessionStateHints(sr *ScenarioRun) []string {
	var started []sessionstate.Started
	for _, a := range sr.Attempts {
		if a.SessionState != "" {
			started = append(started, sessionstate.Started{Name: attemptName(a), State: a.SessionState})
		}
	}
	return sessionstate.Hints(started)
}
