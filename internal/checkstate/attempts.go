package checkstate

import (
	"context"
	"slices"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessions"
	"github.com/twicekit/twicekit/internal/sessionstate"
)

// BeforeAttempt readies worker w for an attempt of the scenario: its
// sessions started afresh under FreshSessionsPerDelivery when an attempt of
// the scenario ran there (an error is the check's, as a queue hook's is).
// It returns what the earlier deliveries of the scenario left on w's idle
// sessions, read before the attempt owns w (internal/sessionstate).
func (s *State[A]) BeforeAttempt(ctx context.Context, w *inject.Worker) string {
	if s.Opts.FreshPerDelivery {
		if err := s.sessionScenario().FreshWorker(ctx, w); err != nil {
			s.Mu.Lock()
			if s.QueueErr == nil {
				s.QueueErr = err // the check's error, as a queue hook's is
			}
			s.Mu.Unlock()
		}
	}
	return s.sessionScenario().State(ctx, w)
}

// sessionScenario is s's current scenario as internal/sessionstate reads
// it, under s.Mu.
func (s *State[A]) sessionScenario() sessionstate.Scenario {
	return sessionstate.Scenario{Mu: &s.Mu, Ran: &s.Ran, Left: &s.Left, SetUp: &s.SetUp, Pool: s.DB.Pool(), DB: s.DB.Name()}
}

// Begin records a, the attempt called name that run runs on worker w, as
// started in the current scenario, and makes a call on w's handles
// without the attempt's context this attempt's.
func (s *State[A]) Begin(name string, run *inject.Run, w *inject.Worker, a *A) {
	s.Mu.Lock()
	if s.attempts == nil {
		s.attempts = map[*inject.Run]*A{}
	}
	s.attempts[run] = a
	s.Mu.Unlock()
	s.NoteRan(name, run, w)
	w.Owner.Begin(run) // a call on w's handles without the attempt's context is this attempt's
}

// End records that the attempt of run on worker w ended.
func (s *State[A]) End(run *inject.Run, w *inject.Worker) {
	w.Owner.End(run)
	s.Mu.Lock()
	delete(s.attempts, run)
	s.Mu.Unlock()
}

// AttemptOf is the attempt the check started run for (nil once it ended).
func (s *State[A]) AttemptOf(run *inject.Run) *A {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.attempts[run]
}

// NoteRan records an attempt started in the current scenario on worker w,
// for naming a lock's holder: its name, its run (whose points record their
// backends) and where it ran.
func (s *State[A]) NoteRan(name string, run *inject.Run, w *inject.Worker) {
	s.Mu.Lock()
	s.Ran = append(s.Ran, sessions.Ran{Name: name, Run: run, Worker: w})
	s.Mu.Unlock()
}

// A lock an attempt waits for past AttemptTimeout is named after its holder
// by internal/sessions, with no PID; a slow job is not a hung one: an
// attempt past AttemptTimeout whose latest statement is still running in
// PostgreSQL is slow, and the report says how to give it more time.

// LockHolder names who holds the lock the latest statement of run waits
// for in PostgreSQL, or "" when it waits for none (or the check cannot
// tell). It is asked before the attempt is crashed: the crash ends the
// wait.
func (s *State[A]) LockHolder(run *inject.Run) string {
	return sessions.LockHolder(s.DB.Pool(), run, func(pid uint32, app string) string {
		return s.HolderName(run, pid, app)
	})
}

// HolderName names the session pid (application_name app) that holds a
// lock waiter waits for.
func (s *State[A]) HolderName(waiter *inject.Run, pid uint32, app string) string {
	s.Mu.Lock()
	ran := slices.Clone(s.Ran)
	s.Mu.Unlock()
	return sessions.HolderName(ran, waiter, pid, app, sessions.OwnNames)
}

// RunningInPostgres reports whether the latest point of run is a statement
// still running in PostgreSQL (sessions.StillRunning).
func (s *State[A]) RunningInPostgres(run *inject.Run) bool {
	steps := run.Steps()
	if len(steps) == 0 {
		return false
	}
	last := steps[len(steps)-1]
	if last.Kind != faults.SQL {
		return false
	}
	return sessions.StillRunning(s.DB.Pool(), last.Backend)
}
