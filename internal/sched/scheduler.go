package sched

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twicekit/twicekit/internal/inject"
)

// Config sets up a [Scheduler].
type Config struct {
	// Attempts is how many attempts run at once (default 2, at most 26).
	Attempts int
	// Choose picks the attempt released at each decision (default: the
	// first ready one, that is Replay(nil)).
	Choose Chooser
	// Locks, when set, makes the scheduler lock-aware: an attempt whose
	// statement waits on a lock another attempt holds is seen as blocked, and
	// another attempt goes. Without it, such a wait is reported as stuck.
	Locks Locks
	// StuckAfter is how long the running attempts may go without reaching a
	// point, returning or being seen blocked before they are reported as
	// stuck (default 10s).
	StuckAfter time.Duration
	// Poll is how long the scheduler waits, after the last event, before it
	// first asks the control connection about lock waits while an attempt's
	// statement is in flight (default 1ms). Until the next event, each wait
	// doubles, up to MaxPollFactor times Poll: a statement that runs long is
	// not asked about a thousand times a second. It only paces the
	// questions; the answers decide.
	Poll time.Duration
	// MaxReleases bounds the points released in one run (default 10000).
	MaxReleases int
}

// Defaults of [Config].
const (
	DefaultStuckAfter = 10 * time.Second
	DefaultPoll       = time.Millisecond
	// MaxPollFactor bounds the backoff of [Config.Poll]: the longest wait
	// between two questions is MaxPollFactor times Poll.
	MaxPollFactor      = 16
	DefaultMaxReleases = 10000
)

// ErrStopped is what an attempt waiting at a point gets when the scheduler
// stops before releasing it (another attempt was stuck, or the run was
// abandoned); the attempt then crashes at that point.
var ErrStopped = errors.New("concurrent: the scheduler stopped before releasing this point")

// Scheduler owns the interleaving of the attempts of one run: every attempt
// waits at each of its points (through the [inject.Plan] from
// [Scheduler.Plan]) until the scheduler releases it, and the scheduler
// releases one attempt at a time, only when no attempt is running: each
// other attempt waits at a point, waits on a lock another attempt holds, or
// has returned. Which ready attempt goes is the [Chooser]'s decision; the
// same choices always give the same interleaving.
//
// Use: New, then Run with a function that starts attempt i under Plan(i);
// call Returned(i) when attempt i's function returns. Run starts the
// attempts one at a time, each once the previous one waits at its first
// point (so the code before the first points never races either), and
// returns when every attempt has returned.
type Scheduler struct {
	cfg    Config
	att    []*attempt
	events chan event
	stop   chan struct{}
	once   sync.Once
}

type state int

const (
	idle     state = iota // not started yet
	running               // between points, or its statement in flight
	waiting               // at a point, waiting for the scheduler
	blocked               // its statement waits on a lock another attempt holds
	returned              // its function returned
)

type attempt struct {
	st       state
	at       inject.Step // waiting: the point it waits before
	last     inject.Step // the last point released
	released int
	pids     map[uint32]bool
	on       []int // blocked: the attempts it waits for
	foreign  bool  // waits in PostgreSQL on a session of no attempt
	grant    chan struct{}

	shownOn       []int // blocked marks already in the trace
	shownReturned bool
}

type event struct {
	i    int
	ret  bool
	step inject.Step
}

// New returns a scheduler for one run.
func New(cfg Config) *Scheduler {
	if cfg.Attempts <= 0 {
		cfg.Attempts = 2
	}
	if cfg.Attempts > MaxAttempts {
		cfg.Attempts = MaxAttempts
	}
	if cfg.Choose == nil {
		cfg.Choose = Replay(nil)
	}
	if cfg.StuckAfter <= 0 {
		cfg.StuckAfter = DefaultStuckAfter
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.MaxReleases <= 0 {
		cfg.MaxReleases = DefaultMaxReleases
	}
	s := &Scheduler{cfg: cfg, events: make(chan event, 2*cfg.Attempts), stop: make(chan struct{})}
	for range cfg.Attempts {
		s.att = append(s.att, &attempt{pids: map[uint32]bool{}, grant: make(chan struct{}, 1)})
	}
	return s
}

// Plan is the plan of attempt i (0 is A): it waits for the scheduler at
// every point.
func (s *Scheduler) Plan(i int) inject.Plan {
	grant := s.att[i].grant
	return inject.Plan{Wait: func(ctx context.Context, st inject.Step) error {
		select {
		case s.events <- event{i: i, step: st}:
		case <-s.stop:
			return ErrStopped
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		select {
		case <-grant:
			return nil
		case <-s.stop:
			return ErrStopped
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}}
}

// Returned tells the scheduler that attempt i's function returned.
func (s *Scheduler) Returned(i int) {
	select {
	case s.events <- event{i: i, ret: true}:
	case <-s.stop:
	}
}

// Stop stops the scheduler: attempts waiting at a point, now or later, get
// [ErrStopped]. Run stops it when it returns.
func (s *Scheduler) Stop() { s.once.Do(func() { close(s.stop) }) }

// Run drives the attempts until all have returned and returns the trace of
// the interleaving. When the running attempts make no progress for
// StuckAfter it returns a [*StuckError] with every attempt's position and
// leaves the waiting attempts waiting: the caller crashes the attempts (so
// their crash says why), then calls [Scheduler.Stop]. On any other error the
// scheduler is stopped and waiting attempts get [ErrStopped].
//
// start(i) must start attempt i (on its own goroutine) and return; a nil
// start means the caller started every attempt already.
func (s *Scheduler) Run(ctx context.Context, start func(i int)) (*Trace, error) {
	t := &Trace{Attempts: len(s.att)}
	for i, a := range s.att {
		if start == nil {
			a.st = running
			continue
		}
		a.st = running
		start(i)
		if err := s.settle(ctx, t); err != nil {
			s.show(t)
			if _, stuck := err.(*StuckError); !stuck {
				s.Stop()
			}
			return t, err
		}
	}
	for {
		if err := s.settle(ctx, t); err != nil {
			s.show(t)
			if _, stuck := err.(*StuckError); !stuck {
				s.Stop()
			}
			return t, err
		}
		s.show(t)
		var ready []int
		released := make([]int, len(s.att))
		for i, a := range s.att {
			if a.st == waiting {
				ready = append(ready, i)
			}
			released[i] = a.released
		}
		if len(ready) == 0 {
			s.Stop()
			return t, nil // settle returns with nobody ready only when all returned
		}
		if len(t.Decisions) >= s.cfg.MaxReleases {
			s.Stop()
			return t, fmt.Errorf("concurrent: the attempts passed %d points in one run; stopping", s.cfg.MaxReleases)
		}
		d := Decision{N: len(t.Decisions), Ready: ready, Released: released}
		c := s.cfg.Choose.Choose(d)
		if !d.IsReady(c) {
			c = ready[0]
		}
		t.Decisions = append(t.Decisions, Choice{Ready: ready, Chose: c})
		a := s.att[c]
		a.st, a.last = running, a.at
		a.released++
		if a.at.Backend != 0 {
			a.pids[a.at.Backend] = true
		}
		t.Events = append(t.Events, Event{Kind: Released, Attempt: c, Step: a.at})
		a.grant <- struct{}{}
	}
}

// show adds to the trace what changed since the last decision, attempt by
// attempt in order, so the trace does not depend on which goroutine got
// where first.
func (s *Scheduler) show(t *Trace) {
	for i, a := range s.att {
		switch {
		case a.st == blocked && !slices.Equal(a.on, a.shownOn):
			t.Events = append(t.Events, Event{Kind: Blocked, Attempt: i, Step: a.last, On: slices.Clone(a.on)})
			a.shownOn = slices.Clone(a.on)
		case a.st != blocked:
			a.shownOn = nil
		}
		if a.st == returned && !a.shownReturned {
			t.Events = append(t.Events, Event{Kind: Returned, Attempt: i})
			a.shownReturned = true
		}
	}
}

func (s *Scheduler) apply(ev event) {
	a := s.att[ev.i]
	if ev.ret {
		a.st = returned
		a.on, a.foreign = nil, false
		return
	}
	a.st, a.at = waiting, ev.step
	a.on, a.foreign = nil, false
	if ev.step.Backend != 0 {
		a.pids[ev.step.Backend] = true
	}
}

// settle waits until no attempt is running: each waits at a point, waits on
// a lock another attempt holds (as PostgreSQL says after the last event), or
// has returned, and at least one is ready unless all returned.
func (s *Scheduler) settle(ctx context.Context, t *Trace) error {
	poll := s.cfg.Poll
	timer := time.NewTimer(poll)
	defer timer.Stop()
	gen, confirmed := 0, -1
	progress := time.Now()
	for {
		var run, wait, blk int
		for _, a := range s.att {
			switch a.st {
			case running:
				run++
			case waiting:
				wait++
			case blocked:
				blk++
			}
		}
		if run == 0 && (blk == 0 || (confirmed == gen && wait > 0)) {
			return nil
		}
		if run == 0 && wait == 0 && confirmed == gen {
			// Every attempt left waits on another's lock: a deadlock, stable
			// until PostgreSQL breaks it. Show the cycle.
			s.show(t)
		}
		timer.Reset(poll)
		select {
		case ev := <-s.events:
			s.apply(ev)
			gen++
			progress = time.Now()
			poll = s.cfg.Poll
			continue
		case <-timer.C:
			poll = min(2*poll, MaxPollFactor*s.cfg.Poll)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if time.Since(progress) >= s.cfg.StuckAfter {
			return s.stuck()
		}
		if s.cfg.Locks == nil {
			continue
		}
		asking := false
		pids := make([][]uint32, len(s.att))
		for i, a := range s.att {
			if (a.st == running || a.st == blocked) && a.last.Kind == inject.SQL {
				asking = true
			}
			for p := range a.pids {
				pids[i] = append(pids[i], p)
			}
			slices.Sort(pids[i])
		}
		if !asking {
			continue
		}
		waits, err := s.cfg.Locks.Waits(ctx, pids)
		if err != nil {
			return err
		}
		// An event that arrived while PostgreSQL answered may have changed
		// the answer (a commit that released the lock): ask again.
		drained := false
	drain:
		for {
			select {
			case ev := <-s.events:
				s.apply(ev)
				gen++
				progress = time.Now()
				poll = s.cfg.Poll
				drained = true
			default:
				break drain
			}
		}
		if drained {
			continue
		}
		for i, a := range s.att {
			if (a.st != running && a.st != blocked) || a.last.Kind != inject.SQL {
				continue
			}
			on := waits.On[i]
			st := running
			if len(on) > 0 {
				st = blocked
			}
			if st != a.st || !slices.Equal(on, a.on) {
				progress = time.Now()
			}
			a.st, a.on, a.foreign = st, on, waits.Foreign[i]
		}
		confirmed = gen
	}
}

func (s *Scheduler) stuck() error {
	e := &StuckError{After: s.cfg.StuckAfter}
	for i, a := range s.att {
		p := Position{Attempt: i, Released: a.released, Step: a.last, On: slices.Clone(a.on), ForeignLock: a.foreign}
		switch a.st {
		case idle:
			p.State = StateNotStarted
		case running:
			p.State = StateRunning
			e.Stuck = append(e.Stuck, i)
		case waiting:
			p.State, p.Step = StateWaiting, a.at
		case blocked:
			p.State = StateBlocked
		case returned:
			p.State = StateReturned
		}
		e.Positions = append(e.Positions, p)
	}
	if len(e.Stuck) == 0 { // every attempt waits on a lock of another: a cycle PostgreSQL did not break
		for i, a := range s.att {
			if a.st == blocked {
				e.Stuck = append(e.Stuck, i)
			}
		}
	}
	return e
}

// PositionState says where an attempt was when the run got stuck.
type PositionState string

// The states of a [Position].
const (
	StateRunning  PositionState = "running"
	StateWaiting  PositionState = "waiting"
	StateBlocked  PositionState = "blocked"
	StateReturned PositionState = "returned"
	// StateNotStarted: the run got stuck before this attempt started.
	StateNotStarted PositionState = "not started"
)

// Position is where one attempt was when the run got stuck.
type Position struct {
	Attempt int
	State   PositionState
	// Released counts the points the attempt had passed.
	Released int
	// Step is the point the attempt waits before (StateWaiting) or the last
	// point it passed (otherwise; Index 0 before the first).
	Step inject.Step
	// On lists the attempts whose locks it waits for (StateBlocked).
	On []int
	// ForeignLock: it waits in PostgreSQL for a session of no attempt.
	ForeignLock bool
}

func (p Position) String() string {
	where := "before its first point"
	if p.Step.Index > 0 {
		where = fmt.Sprintf("after point %d (%s)", p.Step.Index, p.Step.Label)
	}
	switch p.State {
	case StateWaiting:
		return fmt.Sprintf("%s waits for the scheduler before point %d (%s)", Letter(p.Attempt), p.Step.Index, p.Step.Label)
	case StateBlocked:
		return fmt.Sprintf("%s is blocked in PostgreSQL on a lock of %s at point %d (%s)", Letter(p.Attempt), letters(p.On), p.Step.Index, p.Step.Label)
	case StateReturned:
		return fmt.Sprintf("%s has returned", Letter(p.Attempt))
	case StateNotStarted:
		return fmt.Sprintf("%s has not started", Letter(p.Attempt))
	}
	if p.ForeignLock {
		return fmt.Sprintf("%s waits in PostgreSQL for a session that is none of the attempts', %s", Letter(p.Attempt), where)
	}
	return fmt.Sprintf("%s is running %s: it reached no point, did not return and waits on no lock of another attempt", Letter(p.Attempt), where)
}

// StuckError reports attempts that made no progress for a while: not at a
// point, not returned, not waiting on another attempt's lock — stuck outside
// PostgreSQL (a mutex, a channel, a sleep) or on a session of no attempt.
type StuckError struct {
	After     time.Duration
	Stuck     []int
	Positions []Position
}

func (e *StuckError) Error() string {
	var ps []string
	for _, p := range e.Positions {
		ps = append(ps, p.String())
	}
	return fmt.Sprintf("concurrent: %s stuck for %s: %s", letters(e.Stuck), e.After, strings.Join(ps, "; "))
}

func letters(is []int) string {
	var ls []string
	for _, i := range is {
		ls = append(ls, Letter(i))
	}
	return strings.Join(ls, " and ")
}
