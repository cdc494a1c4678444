package twice

import (
	"context"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessionstate"
)

// What an earlier delivery of the scenario left on a worker's sessions is
// read before a redelivery starts there, and named in a finding's hints
// (internal/sessionstate).

// sessionScenario is c's current scenario as internal/sessionstate reads
// it, under c.mu.
func (c *checker) sessionScenario() sessionstate.Scenario {
	return sessionstate.Scenario{Mu: &c.mu, Ran: &c.ran, Left: &c.left, SetUp: &c.setUp, Pool: c.db.Pool(), DB: c.db.Name()}
}

// freshWorker ends the sessions of w when an attempt of the scenario ran
// there (sessionstate.Scenario.FreshWorker).
func (c *checker) freshWorker(ctx context.Context, w *inject.Worker) error {
	return c.sessionScenario().FreshWorker(ctx, w)
}

// sessionState says what the earlier deliveries of the scenario left on
// the idle sessions of w (sessionstate.Scenario.State).
func (c *checker) sessionState(ctx context.Context, w *inject.Worker) string {
	return c.sessionScenario().State(ctx, w)
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
