package checkstate

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/fakeserve"
	"github.com/twicekit/twicekit/internal/handles"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/options"
	"github.com/twicekit/twicekit/internal/queue"
	"github.com/twicekit/twicekit/internal/seed"
	"github.com/twicekit/twicekit/internal/sessions"
	"github.com/twicekit/twicekit/internal/sessionstate"
	"github.com/twicekit/twicekit/internal/shard"
	"github.com/twicekit/twicekit/internal/thin"
	"github.com/twicekit/twicekit/internal/wall"
	"github.com/twicekit/twicekit/pgfixture"
)

// State is what one check (or one of its lanes) reuses across its
// scenarios: one database, one worker with warm connections, one effect
// log; and what the scenario running reads and writes. A is twice's
// Attempt.
type State[A any] struct {
	Opts   *options.Config // the check's options
	Srv    *pgfixture.Server
	DB     *pgfixture.DB
	Worker *inject.Worker
	Log    *effects.Log
	Router *effects.Router // behind http.DefaultTransport; the handles' own are per worker (handles)
	// Started is when the check began; Wall, when set, is its wall budget
	// (internal/wall).
	Started time.Time
	Wall    *wall.Clock
	// ThroughDefault is the router for requests through http.DefaultTransport
	// (twice's default_transport.go).
	ThroughDefault http.RoundTripper

	Provider *effects.Provider

	LeftOut    thin.LeftOut // what the budget left out of a long job
	Concurrent *Concurrency // the concurrent scenarios' workers
	closers    []func()
	*Shared

	// seedFn is the job's seed; gate makes a worker's effect calls points
	// of its attempts (twice's checker.gate).
	seedFn func(context.Context, pgx.Tx) error
	gate   func(*inject.Owner) handles.Gate

	Mu      sync.Mutex
	Clock   time.Time
	Foreign []string // effect calls made with a context that is not the attempt's
	// handles are each worker's effect handles (effects.go), and
	// attempts the attempt each running run was started for.
	handles  map[*inject.Worker]*handles.Effects
	attempts map[*inject.Run]*A
	Ran      []sessions.Ran // the attempts started in the current scenario (attempts.go)
	QueueErr error          // the first error of a queue hook (queue.go)
	Follow   queue.State[A] // the scenario's follow-ups (internal/queue)
	// SetUp is how each worker session started, and Left what each was
	// seen with in the current scenario (internal/sessionstate).
	SetUp sessionstate.SetUp
	Left  sessionstate.Left

	// SeedOn says that s's database restores the seeded state on Reset
	// (seed.go).
	SeedOn bool

	Parallel int         // how many scenarios may play at once (twice's parallel.go)
	Shard    shard.Shard // the share of the scenarios this check plays (twice's shard.go)
}

// Shared is what a check shares with its lanes: the state every scenario
// starts from (seed.go), and what went wrong with the fakes of the check
// and its lanes (effects.go).
type Shared struct {
	Seeded      *seed.State
	FakeTrouble *fakeserve.Trouble
}

// NewShared is a check's Shared, before its first scenario.
func NewShared() *Shared {
	return &Shared{Seeded: &seed.State{}, FakeTrouble: &fakeserve.Trouble{}}
}

// Start sets s up on database db of srv and its worker, with the options
// opts, the job's seed, gate for the effect calls of each worker's
// attempts and what it shares with the check's lanes; release gives back
// the connections reserved for them, once every worker is closed. The
// worker's *sql.DB is opened on the connector the options name, and the
// effect fakes are made (wireEffects). After an error s is to be closed.
func (s *State[A]) Start(opts *options.Config, seedFn func(context.Context, pgx.Tx) error, gate func(*inject.Owner) handles.Gate,
	srv *pgfixture.Server, db *pgfixture.DB, worker *inject.Worker, release func(), shared *Shared) error {
	s.Opts, s.seedFn, s.gate, s.Srv, s.DB, s.Worker, s.Log, s.Shared = opts, seedFn, gate, srv, db, worker, effects.NewLog(), shared
	s.SetUp.Watch(worker)
	s.OnClose(release) // last, once every worker is closed
	s.OnClose(worker.Close)
	if opts.SQLOpen != nil {
		if err := s.useSQL(worker, sessions.WorkerConfig(db.ConnConfig())); err != nil {
			return err
		}
	}
	return s.wireEffects()
}

// Now is the time on the scenario's clock.
func (s *State[A]) Now() time.Time {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Clock
}

// Later moves the scenario's clock on by d.
func (s *State[A]) Later(d time.Duration) {
	s.Mu.Lock()
	s.Clock = s.Clock.Add(d)
	s.Mu.Unlock()
}

// OnClose adds f to what Close does first (last added, first run).
func (s *State[A]) OnClose(f func()) { s.closers = append(s.closers, f) }

// Close releases what the check holds and drops its database unless keep.
func (s *State[A]) Close(ctx context.Context, keep bool) error {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
	sessions.EndLeftovers(ctx, s.DB.Pool(), s.DB.Name()) // a pool the job never closed, not the next check's
	return s.DB.Close(ctx, keep)
}

// Reset starts a scenario: its workers on fresh sessions, the database
// reset to the seeded state (and, when that cloned it again, every worker
// session ended), the effect log and fakes reset, the clock at
// the options' start, the scenario's foreign calls, attempts and session
// state forgotten, and the follow-ups waiting once the database is seeded
// noted (follow says how to list them).
func (s *State[A]) Reset(ctx context.Context, follow queue.Follow[A]) error {
	pool := s.DB.Pool() // a reset that clones the database again gives it a new pool
	if err := s.FreshSessions(ctx); err != nil {
		return err
	}
	if err := s.ResetSeeded(ctx); err != nil {
		return err
	}
	if s.DB.Pool() != pool { // the sessions FreshSessions kept were ended with the database
		if err := s.EndSessions(ctx); err != nil {
			return err
		}
	}
	s.Log.Reset()
	s.resetEffects()
	s.Mu.Lock()
	s.Clock = s.Opts.Start
	s.Foreign = nil
	s.Ran = nil
	s.Left = sessionstate.Left{}
	s.Mu.Unlock()
	if err := s.resetFollowUps(ctx, follow); err != nil {
		return err
	}
	s.Worker.TakeForeign()
	return nil
}

// World is what a scenario left: the database, the effect log, the
// requests the payment provider refused, and the effect calls made with a
// context that is not an attempt's.
type World struct {
	Snapshot *pgfixture.Snapshot
	Effects  []effects.Effect
	Rejected []effects.Rejection
	Foreign  []string
}

// World reads what the scenario left (and takes its foreign calls).
func (s *State[A]) World(ctx context.Context) (World, error) {
	snap, err := s.DB.Snapshot(ctx, s.Opts.Snapshot...)
	if err != nil {
		return World{}, fmt.Errorf("twice: internal error: reading the database: %w", err)
	}
	return World{Snapshot: snap, Effects: s.Log.Effects(), Rejected: s.Provider.Rejected(), Foreign: append(s.Worker.TakeForeign(), s.takeForeign()...)}, nil
}

// takeForeign returns the effect calls made with a context that is not an
// attempt's, and forgets them.
func (s *State[A]) takeForeign() []string {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	f := s.Foreign
	s.Foreign = nil
	return f
}

// ForeignCall records an effect call made with a context that is not an
// attempt's while no attempt ran on its worker.
func (s *State[A]) ForeignCall(label string) {
	s.Mu.Lock()
	s.Foreign = append(s.Foreign, label)
	s.Mu.Unlock()
}
