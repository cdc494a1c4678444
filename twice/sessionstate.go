package twice

import (
	"github.com/twicekit/twicekit/internal/sessionstate"
)

// What an earlier delivery of the scenario left on a worker's sessions is
// read before a redelivery starts there, and named in a finding's hints
// (internal/sessionstate).

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
