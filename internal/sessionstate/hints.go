package sessionstate

import "fmt"

// A scenario's first delivery starts on fresh sessions; its redeliveries
// reuse the worker's sessions, as a pooled production connection would.
// Before a redelivery starts on a worker an earlier delivery of the
// scenario ran on, the check reads, on each idle session of that worker,
// what a session keeps across transactions (OnWorker). What an earlier
// delivery left there (not what the application's AfterConnect set up)
// goes on the redelivery's record (twice.AttemptRecord.SessionState), and a
// finding whose redelivery ran on such a session says so among its hints.
// The text names the state and the attempts, never a PID or a temporary
// schema's number.

// Started is an attempt of a finding's scenario and the state it found on
// its session ("" when none).
type Started struct {
	Name  string
	State string
}

// Hints say which attempts of a finding's scenario started on a session an
// earlier delivery had left state on, and what that means: one hint for
// the attempts that found the same state.
func Hints(attempts []Started) []string {
	var states []string
	by := map[string][]string{}
	for _, a := range attempts {
		if a.State == "" {
			continue
		}
		if _, ok := by[a.State]; !ok {
			states = append(states, a.State)
		}
		by[a.State] = append(by[a.State], a.Name)
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
