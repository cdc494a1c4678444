package sessionstate

import (
	"context"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessions"
)

// Scenario is the current scenario as internal/checkstate keeps it, under its
// lock (Mu): the attempts started (Ran), what each session was seen with
// (Left), how each worker session started (SetUp), and the check's
// database (Pool, DB) where PostgreSQL ends them.
type Scenario struct {
	Mu    *sync.Mutex
	Ran   *[]sessions.Ran
	Left  *Left
	SetUp *SetUp
	Pool  *pgxpool.Pool
	DB    string
}

// FreshWorker starts the sessions of w as new ones when an attempt of the
// scenario ran there (inject.Worker.Fresh), and waits until PostgreSQL has
// ended those it did not keep (FreshSessionsPerDelivery).
func (s Scenario) FreshWorker(ctx context.Context, w *inject.Worker) error {
	if !s.RanOn(w) {
		return nil // fresh already (internal/checkstate's FreshSessions)
	}
	kept := w.Fresh(ctx)
	name := w.Pool.Config().ConnConfig.RuntimeParams["application_name"]
	return sessions.WaitEnded(ctx, s.Pool, s.DB, []string{name}, kept, "a worker of the check") // at most 10 s
}

// RanOn reports whether an attempt of the current scenario ran on w.
func (s Scenario) RanOn(w *inject.Worker) bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, r := range *s.Ran {
		if r.Worker == w {
			return true
		}
	}
	return false
}

// State says what the earlier deliveries of the scenario left on the idle
// sessions of w, as a redelivery about to start there finds them
// (OnWorker), or "" when they left nothing (or the check could not look).
func (s Scenario) State(ctx context.Context, w *inject.Worker) string {
	if !s.RanOn(w) {
		return "" // the first delivery on w: its sessions are fresh
	}
	return OnWorker(ctx, w, s.SetUp, s.usedSession, s.leftBy)
}

// usedSession reports whether an attempt of the current scenario ran a
// statement on backend pid, and whether one of them may have SET a
// parameter for the session.
func (s Scenario) usedSession(pid uint32) (used, sets bool) {
	s.Mu.Lock()
	ran := slices.Clone(*s.Ran)
	s.Mu.Unlock()
	return Used(ran, pid)
}

// leftBy says which attempts of the current scenario left state on session
// pid, "" when none did (Left.By).
func (s Scenario) leftBy(pid uint32, state []string) string {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Left.By(*s.Ran, pid, state)
}
