package inject

import (
	"context"
	"errors"
	"strings"
	"sync"
)

// Owner is who a worker's handles belong to: the attempt running on the
// worker now. A worker runs one attempt at a time, so a call on its handles
// that carries no attempt's context (database/sql's context-free methods,
// which pass context.Background(); a library that pings or reads the server
// version without a context; an effect call on context.Background()) belongs
// to the attempt running there and is a point of it like any other. The
// harness gives each worker effect handles of their own that ask the same
// Owner (see [Owner.Of]). A call made between attempts is a call with a
// foreign context, reported to foreign.
type Owner struct {
	foreign Foreign

	mu  sync.Mutex
	run *Run
}

// NewOwner returns the owner of a worker's handles; foreign (which may be
// nil) hears of the calls that belong to no attempt.
func NewOwner(foreign Foreign) *Owner { return &Owner{foreign: foreign} }

// Begin says that r runs on the handles from now on.
func (o *Owner) Begin(r *Run) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.run = r
	o.mu.Unlock()
}

// End says that r no longer runs on the handles.
func (o *Owner) End(r *Run) {
	if o == nil {
		return
	}
	o.mu.Lock()
	if o.run == r {
		o.run = nil
	}
	o.mu.Unlock()
}

// Of is the attempt a call with ctx on the worker's handles belongs to: the
// one ctx carries, or else the one running on the handles (nil between
// attempts). Statements and effect calls ask the same question.
func (o *Owner) Of(ctx context.Context) *Run { return o.runOf(ctx) }

// runOf is Of.
func (o *Owner) runOf(ctx context.Context) *Run {
	if r := FromContext(ctx); r != nil {
		return r
	}
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.run
}

// refuseForeign records a call that belongs to no attempt.
func (o *Owner) refuseForeign(label string) {
	if o != nil && o.foreign != nil {
		o.foreign(label)
	}
}

// changesNothing reports whether a statement can only undo what its
// transaction did (ROLLBACK, ROLLBACK TO SAVEPOINT, RELEASE SAVEPOINT): sent
// with a foreign context, or after its attempt returned, it is let through,
// since PostgreSQL would roll the transaction back anyway when the
// connection goes, and refusing it would hide the job's real error.
func changesNothing(label string) bool {
	l := strings.ToLower(strings.TrimSpace(label))
	return l == "rollback" || strings.HasPrefix(l, "rollback ") || strings.HasPrefix(l, "rollback;") ||
		strings.HasPrefix(l, "release ") || l == "abort"
}

// letThrough reports whether a statement refused with err (nil: it had no
// attempt) may still be sent: one that changes nothing.
func letThrough(label string, err error) bool {
	return changesNothing(label) && (err == nil || errors.Is(err, ErrFinished))
}
