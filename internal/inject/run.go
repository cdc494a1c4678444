package inject

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrCrashed is returned (wrapped) to a job whose attempt the harness crashed:
// the call it made was refused and never reached the world.
var ErrCrashed = errors.New("twice: the attempt was crashed here by the check (fail-stop); nothing after this point reaches the world")

// ErrReplyLost is what a job gets when the check loses the reply of an effect
// call that the provider applied (a timeout, a 5xx from a proxy).
var ErrReplyLost = errors.New("twice: the reply was lost: the provider applied the call, but the job saw a timeout")

// ErrForeignContext is returned when a statement or effect call carries a
// context that belongs to no attempt.
var ErrForeignContext = errors.New("twice: the job used a context that is not the attempt's: pass the ctx the job was given to every query and effect call")

// Plan says what to do with one attempt.
type Plan struct {
	// CrashBefore crashes the attempt just before its n-th point (1-based);
	// 0 never crashes.
	CrashBefore int
	// CrashAfter crashes the attempt right after its n-th point was applied
	// (an effect the provider carried out; the attempt dies before it hears
	// back). Only effect points are applied this way; see [Run.Applied].
	CrashAfter int
	// LoseReply loses the reply of the n-th point: the effect is applied but
	// the job gets [ErrReplyLost], as after a timeout, and carries on. At a
	// statement that commits ([Step.Commits]), PostgreSQL applies and commits
	// it, then its connection is cut and the job gets a connection error
	// ([ErrStatementReplyLost]).
	LoseReply int
	// ImplicitTx plays every autocommit statement of the attempt sent through
	// pgx as PostgreSQL runs it, an implicit transaction: sent inside a
	// BEGIN, it reaches a second point before its COMMIT (the concurrent
	// scenarios, where another attempt may run in between). A statement's
	// results and errors are what the job would get in autocommit.
	ImplicitTx bool
	// Wait, when set, is called before every point of the attempt proceeds
	// (after it is recorded); a scheduler blocks in it. A non-nil error
	// crashes the attempt at that point.
	Wait func(ctx context.Context, s Step) error
	// Offset is how many points the job's earlier deliveries in the same
	// run of the queue had (deliveries that snoozed): this attempt's points
	// are numbered from Offset+1, and CrashBefore, CrashAfter and LoseReply
	// count in those numbers.
	Offset int
}

// Run is one attempt as the harness sees it: the points it reached, where it
// crashed, and the means to cut it off.
type Run struct {
	name   string
	plan   Plan
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	steps   []Step
	crashed bool
	done    bool
	crashAt Step // the point refused by the crash; Index 0 when the crash came between points
	reason  string
	cutters []func()
	late    []string // the labels of calls refused because the job had returned
	sites   []string // where the goroutines that made them were started (CreatedBy)

	returned bool          // the job function returned ([Run.Return])
	afterAck bool          // the crash came after the ack
	acked    chan struct{} // closed once the ack is decided ([Run.Ack])
	ackOnce  sync.Once
}

type runKey struct{}

// Start begins an attempt named name (for messages) under plan. The returned
// context carries the run; the job must use it (or contexts derived from it)
// for every statement and effect call.
func Start(parent context.Context, name string, plan Plan) (context.Context, *Run) {
	ctx, cancel := context.WithCancelCause(parent)
	r := &Run{name: name, plan: plan, cancel: cancel, acked: make(chan struct{})}
	return context.WithValue(ctx, runKey{}, r), r
}

// FromContext returns the attempt that ctx belongs to, or nil.
func FromContext(ctx context.Context) *Run {
	if ctx == nil {
		return nil
	}
	r, _ := ctx.Value(runKey{}).(*Run)
	return r
}

// Name is the name the attempt was started with.
func (r *Run) Name() string { return r.name }

// OnCrash registers f to run when the attempt crashes (at most once per
// registration). The harness registers the functions that cut the attempt's
// connections. If the attempt has already crashed, f runs at once.
func (r *Run) OnCrash(f func()) {
	r.mu.Lock()
	if r.crashed {
		r.mu.Unlock()
		f()
		return
	}
	r.cutters = append(r.cutters, f)
	r.mu.Unlock()
}

// Enter is called at every point of the attempt. It records the point and
// returns nil when the attempt may go on, or an error wrapping [ErrCrashed]
// when the attempt crashed at this point or before it: the caller must then
// refuse the call without letting it reach the world.
func (r *Run) Enter(ctx context.Context, kind Kind, label string) (Step, error) {
	return r.EnterStep(ctx, Step{Kind: kind, Label: label})
}

// EnterStep is [Run.Enter] for a step with more detail (an SQL point's
// backend); its Index is assigned here.
func (r *Run) EnterStep(ctx context.Context, s Step) (Step, error) {
	r.mu.Lock()
	if r.crashed {
		r.mu.Unlock()
		return Step{}, r.crashError()
	}
	if r.returned && !r.done && !endsWithAttempt(ctx) {
		// A goroutine on a context that outlives the attempt
		// (context.WithoutCancel, context.Background()) runs on after the
		// ack, as in production: its calls are the attempt's later points,
		// once the check has played the ack (or crashed before it).
		r.mu.Unlock()
		<-r.acked
		r.mu.Lock()
		if r.crashed {
			r.mu.Unlock()
			return Step{}, r.crashError()
		}
		s.AfterAck = true
	}
	if r.done || (r.returned && !s.AfterAck) {
		r.refuseLate(s.Label)
		r.mu.Unlock()
		return Step{}, fmt.Errorf("%s: %w", r.name, ErrFinished)
	}
	s.Index = r.plan.Offset + len(r.steps) + 1
	if r.plan.CrashBefore == s.Index {
		r.mu.Unlock()
		r.crash(s, fmt.Sprintf("crash before point %d", s.Index))
		return s, r.crashError()
	}
	r.steps = append(r.steps, s)
	wait := r.plan.Wait
	r.mu.Unlock()
	if wait != nil && !s.AfterAck { // after the ack, no scheduler holds the attempt
		if err := wait(ctx, s); err != nil {
			r.crash(Step{}, err.Error())
			return s, r.crashError()
		}
	}
	return s, nil
}

// Applied is called once the effect of the attempt's latest point was
// applied. It crashes the attempt there when the plan says CrashAfter, or
// returns [ErrReplyLost] when it says LoseReply; nil otherwise.
func (r *Run) Applied(ctx context.Context) error {
	r.mu.Lock()
	n := r.plan.Offset + len(r.steps)
	reached := len(r.steps) > 0
	crashed := r.crashed
	r.mu.Unlock()
	switch {
	case crashed:
		return r.crashError()
	case reached && r.plan.CrashAfter == n:
		r.crash(Step{}, fmt.Sprintf("crash after point %d was applied", n))
		return r.crashError()
	case reached && r.plan.LoseReply == n:
		return fmt.Errorf("%s: %w", r.name, ErrReplyLost)
	}
	return nil
}

func (r *Run) crashError() error {
	return fmt.Errorf("%s: %w", r.name, ErrCrashed)
}

// Crash crashes the attempt now, between points (a hang, a lost ack).
func (r *Run) Crash(reason string) { r.crash(Step{}, reason) }

func (r *Run) crash(at Step, reason string) {
	r.mu.Lock()
	if r.crashed {
		r.mu.Unlock()
		return
	}
	r.crashed = true
	r.crashAt = at
	select {
	case <-r.acked:
		r.afterAck = r.returned
	default:
	}
	r.reason = reason
	cutters := r.cutters
	r.cutters = nil
	r.mu.Unlock()
	for _, cut := range cutters {
		cut()
	}
	r.cancel(ErrCrashed)
}

// ErrFinished refuses a call made with the context of an attempt whose job
// function had already returned (for example database/sql rolling back a
// transaction the job left open).
var ErrFinished = errors.New("twice: the attempt had already returned; its context is no longer usable")

// errReturned is the cause with which the attempt's context ends when its
// job function returned.
var errReturned = errors.New("twice: the job function returned")

// endsWithAttempt reports whether ctx ended because its attempt's job
// function returned: the attempt's context, or one derived from it.
func endsWithAttempt(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errReturned)
}

// refuseLate records a call refused because the job had returned, with
// where the goroutine that made it was started. The caller holds r.mu.
func (r *Run) refuseLate(label string) {
	r.late = append(r.late, label)
	r.sites = append(r.sites, CreatedBy())
}

// Return says the attempt's job function returned, and cancels its context,
// as every queue does. A later call with that context (or one derived from
// it) is refused with [ErrFinished] and recorded (see [Run.Late]). A call
// with a context that outlives the attempt waits for [Run.Ack], then is a
// point of the attempt (Step.AfterAck).
func (r *Run) Return() {
	r.mu.Lock()
	r.returned = true
	r.mu.Unlock()
	r.cancel(errReturned)
}

// Ack says the check has played the ack (or crashed the attempt before
// it): the calls waiting since [Run.Return] go on.
func (r *Run) Ack() { r.ackOnce.Do(func() { close(r.acked) }) }

// Refuse refuses the attempt's later calls with [ErrFinished] (see
// [Run.Late]) without cancelling its context yet.
func (r *Run) Refuse() {
	r.mu.Lock()
	r.done = true
	r.mu.Unlock()
	r.Ack()
}

// Finish ends the attempt once its job function has returned: its context is
// cancelled and later calls with it are refused.
func (r *Run) Finish() {
	r.mu.Lock()
	r.done = true
	r.mu.Unlock()
	r.Ack()
	r.cancel(context.Canceled)
}

// RefuseEnded refuses a call (labelled label) whose context carries r when
// r's job function has returned and the context ended with it: pgxpool's
// acquire and database/sql fail on such a context before any statement
// tracer sees the call, so the check asks here first. It reports whether
// the call was refused.
func (r *Run) RefuseEnded(ctx context.Context, label string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.crashed || !(r.done || (r.returned && endsWithAttempt(ctx))) {
		return false
	}
	r.refuseLate(label)
	return true
}

// Done reports whether the attempt's job function returned ([Run.Return],
// [Run.Refuse] or [Run.Finish] was called).
func (r *Run) Done() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done || r.returned
}

// Late returns the labels of the calls refused with [ErrFinished]: made
// with the attempt's context after its job function had returned.
func (r *Run) Late() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.late...)
}

// LateSites returns, for each call of [Run.Late], where the goroutine that
// made it was started ([CreatedBy]).
func (r *Run) LateSites() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sites...)
}

// Steps returns the points the attempt reached (the refused crash point is
// not among them).
func (r *Run) Steps() []Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Step(nil), r.steps...)
}

// CrashedAfterAck reports whether the attempt crashed after [Run.Ack]: at
// a point of a goroutine on a context that outlives the attempt.
func (r *Run) CrashedAfterAck() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.afterAck
}

// Crashed reports whether the attempt crashed, the point that was refused
// (Index 0 when it crashed between points) and why.
func (r *Run) Crashed() (bool, Step, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.crashed, r.crashAt, r.reason
}

// Point is an explicit point in a job: a no-op outside a check. Inside one it
// is a place where the attempt may be crashed or paused; it then returns an
// error wrapping [ErrCrashed] and the job should stop (anything it still
// tries is refused anyway).
func Point(ctx context.Context, name string) error {
	r := FromContext(ctx)
	if r == nil {
		return nil
	}
	_, err := r.Enter(ctx, Explicit, "point "+Label(name))
	return err
}
