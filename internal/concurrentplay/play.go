package concurrentplay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/internal/sched"
	"github.com/twicekit/twicekit/internal/sessions"
)

// Attempt is an attempt twice started on a worker, whose job function runs
// on its own goroutine.
type Attempt interface {
	Run() *inject.Run // the attempt's run, for the scheduler
}

// Play is one concurrent scenario's two attempts, of type A, each making a
// record of type R once waited for, and its problems, of type P.
type Play[A Attempt, R, P any] struct {
	Attempts int           // how many attempts run at once
	Choose   sched.Chooser // the schedule
	Pool     *pgxpool.Pool // the check's control pool, which sees every session's locks
	Names    []string      // the application_name of each attempt's worker's sessions ("": the check's worker)
	// StuckAfter is AttemptTimeout: the scheduler reports an attempt
	// stuck after it without progress.
	StuckAfter time.Duration

	Start func(i int, plan inject.Plan) A // starts attempt i under plan, returning at once
	Wait  func(a A) R                     // waits for an attempt and records it

	After  func(rec *R)           // what the queue does once an attempt returned (its ack, its retry)
	Record func(played Played[R]) // the scenario's run takes the attempts and the interleaving
	// Ended is the problem an attempt's end makes on its own (a panic, a
	// hang, goroutines after Run), if any, and else whether the queue is
	// done with it (false: it delivers it again).
	Ended func(rec R) (problem P, ok bool, done bool)
	Name  func(rec R) string  // an attempt's name in the stuck problem's text
	Stuck func(text string) P // the problem of stuck attempts, from its text (internal/report/stuck.go)
	Add   func(problem P)     // the scenario's run takes a problem
	// Redeliver delivers rec's job again, on the check's worker, one after
	// the other; false: stop.
	Redeliver func(rec R) bool
}

// Played is what the scheduler did in one concurrent scenario.
type Played[R any] struct {
	Recs  []R // the attempts that started, in letter order
	Trace *sched.Trace
	Stuck *sched.StuckError
	// Held: the stuck attempts that waited on a lock of one that returned.
	Held map[int]sessions.HeldLock
}

// Run runs the attempts at once under the scheduler, then redelivers, one
// after the other, the attempts that crashed or returned an error (the
// losers of a unique violation, a serialization failure or a deadlock), as
// the queue would, unless the scenario made a problem. Attempts still
// running when the scheduler stops are crashed (stuck, or the check
// stopped them); an error other than attempts stuck is the check's own.
func (p Play[A, R, P]) Run(ctx context.Context) error {
	played, err := p.play(ctx)
	if err != nil {
		return err
	}
	recs, stuck, held := played.Recs, played.Stuck, played.Held
	for i := range recs {
		p.After(&recs[i])
	}
	p.Record(played)

	var failed []R
	problems := 0
	for _, rec := range recs {
		switch problem, ok, done := p.Ended(rec); {
		case ok:
			p.Add(problem)
			problems++
		case !done:
			failed = append(failed, rec)
		}
	}
	if stuck != nil {
		names := make([]string, len(recs))
		for i, r := range recs {
			names[i] = p.Name(r)
		}
		if len(held) == len(stuck.Stuck) {
			p.Add(p.Stuck(report.HeldLockText(stuck, held, names, p.StuckAfter)))
		} else {
			p.Add(p.Stuck(report.StuckText(stuck, names, p.StuckAfter)))
		}
		problems++
	}
	if problems > 0 {
		return nil
	}
	for _, rec := range failed {
		if !p.Redeliver(rec) {
			break
		}
	}
	return nil
}

// play runs the attempts at once under the scheduler.
func (p Play[A, R, P]) play(ctx context.Context) (Played[R], error) {
	scheduler := sched.New(sched.Config{
		Attempts:   p.Attempts,
		Choose:     p.Choose,
		Locks:      sched.PostgresLocks(p.Pool, p.Names...),
		StuckAfter: p.StuckAfter,
	})
	ras := make([]A, p.Attempts)
	started := make([]bool, p.Attempts)
	recs := make([]R, p.Attempts)
	done := make([]atomic.Bool, p.Attempts)
	var wg sync.WaitGroup
	start := func(i int) {
		plan := scheduler.Plan(i)
		plan.ImplicitTx = PlaysImplicitTx()
		ra := p.Start(i, plan)
		ras[i], started[i] = ra, true
		wg.Go(func() {
			recs[i] = p.Wait(ra)
			done[i].Store(true)
			scheduler.Returned(i)
		})
	}
	trace, err := scheduler.Run(ctx, start)
	var stuck *sched.StuckError
	var held map[int]sessions.HeldLock
	if err != nil {
		reason := "the check stopped it: " + strings.Join(strings.Fields(err.Error()), " ")
		if errors.As(err, &stuck) {
			reason = "the check stopped it: " + report.Letters(stuck.Stuck) + " stuck"
			held = p.heldLocks(stuck, ras, started)
		}
		for i, ra := range ras {
			if started[i] && !done[i].Load() {
				ra.Run().Crash(reason)
			}
		}
		scheduler.Stop()
		wg.Wait()
		if stuck == nil {
			return Played[R]{}, fmt.Errorf("twice: internal error: scheduling the concurrent attempts: %w", err)
		}
	}
	wg.Wait()
	for i := range ras {
		if !started[i] { // never started: the run got stuck before
			recs = recs[:i]
			break
		}
	}
	return Played[R]{Recs: recs, Trace: trace, Stuck: stuck, Held: held}, nil
}

// heldLocks names, for each stuck attempt blocked in PostgreSQL only on
// attempts that had returned, the lock it waits for; asked before the check
// crashes it (the crash ends the wait).
func (p Play[A, R, P]) heldLocks(e *sched.StuckError, ras []A, started []bool) map[int]sessions.HeldLock {
	held := map[int]sessions.HeldLock{}
	for _, i := range e.Stuck {
		if i >= len(e.Positions) || i >= len(ras) || !started[i] {
			continue
		}
		pos := e.Positions[i]
		if pos.State != sched.StateBlocked || len(pos.On) == 0 {
			continue
		}
		returned := true
		for _, j := range pos.On {
			returned = returned && j < len(e.Positions) && e.Positions[j].State == sched.StateReturned
		}
		if !returned {
			continue
		}
		if h, ok := sessions.WaitedLock(p.Pool, ras[i].Run()); ok {
			held[i] = h
		}
	}
	return held
}

// StuckNote is the timeline's word for stuck attempt i.
func StuckNote(held map[int]sessions.HeldLock, stuck *sched.StuckError, i int) string {
	if h, ok := held[i]; ok {
		return fmt.Sprintf("STUCK (on %s, held by %s's session after it returned)", h.What, report.Letters(stuck.Positions[i].On))
	}
	return "STUCK (outside PostgreSQL)"
}
