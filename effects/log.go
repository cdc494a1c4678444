package effects

import (
	"context"
	"fmt"
	"strconv"
	"sync"
)

// Effect kinds made by the fakes of this package.
const (
	KindEmail   = "email"
	KindPayment = "payment"
	KindWebhook = "webhook"
)

// Origin says who made an effect call: the job, its attempt and the point of
// the attempt at which the call was made. The harness hands it out through
// [Gate.Before]; without a gate it is the zero Origin.
type Origin struct {
	JobID   string
	Attempt int
	Point   int
}

// IsZero reports whether o is the zero Origin (no harness was involved).
func (o Origin) IsZero() bool { return o == Origin{} }

// String renders o as "job 9812 attempt 2 point 5", or "no origin".
func (o Origin) String() string {
	if o.IsZero() {
		return "no origin"
	}
	return fmt.Sprintf("job %s attempt %d point %d", o.JobID, o.Attempt, o.Point)
}

// Call describes an effect call to the [Gate] before it reaches the world.
// Kind is one of the Kind constants (or a user kind); Label is short human
// text for timelines, e.g. "email to ann@example.com: Your receipt". Labels
// hold nothing that varies between runs (no ports, no times).
type Call struct {
	Kind  string
	Label string
}

// Gate is implemented by the harness (package twice, on the engine in
// internal/inject). Every effect call of this package asks it before the
// call and after it.
type Gate interface {
	// Before is the point before the call. A non-nil error refuses the call:
	// nothing reaches the world and the job gets the error, wrapped so that
	// errors.Is works (the attempt crashed, or ctx is not an attempt's).
	Before(ctx context.Context, c Call) (Origin, error)
	// After runs once the provider applied the call. A non-nil error means
	// the reply was lost or the attempt died after the apply: the effect
	// stays applied and the job gets this error (wrapped).
	After(ctx context.Context, c Call) error
}

// Effect is one thing a job did outside the database, as the world saw it.
//
// Key identifies the target: the recipient of an email, the URL of a
// webhook, the Idempotency-Key of a payment ("" when the job sent none).
// Payload is what was sent, in a canonical form. Seq is the effect's
// position in its [Log], starting at 1.
type Effect struct {
	Kind    string
	Key     string
	Payload string
	Origin  Origin
	Seq     int
}

// String renders e on one line, deterministically:
//
//	#3 email ann@example.com "Your receipt\nThanks!" (job 9812 attempt 1 point 4)
func (e Effect) String() string {
	return fmt.Sprintf("#%d %s (%s)", e.Seq, describe(e.Kind, e.Key, e.Payload, true), e.Origin)
}

// describe renders kind, key and payload; keyed=false leaves the key out.
func describe(kind, key, payload string, keyed bool) string {
	s := kind
	if keyed {
		if key == "" {
			s += " (no key)"
		} else {
			s += " " + key
		}
	}
	return s + " " + strconv.Quote(payload)
}

// Log records effects in the order they reached the world. It is safe for
// concurrent use by attempts running at the same time. The zero Log is
// ready to use; [NewLog] is the usual way to get one.
type Log struct {
	mu      sync.Mutex
	effects []Effect
}

// NewLog returns an empty log.
func NewLog() *Log { return &Log{} }

// Record appends e, assigning its Seq (any Seq in e is overwritten).
func (l *Log) Record(e Effect) { l.Append(e) }

// Append is [Log.Record] returning the effect as recorded, with its Seq.
func (l *Log) Append(e Effect) Effect {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Seq = len(l.effects) + 1
	l.effects = append(l.effects, e)
	return e
}

// Effects returns a copy of the recorded effects, in Seq order.
func (l *Log) Effects() []Effect {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.effects) == 0 {
		return nil
	}
	return append([]Effect(nil), l.effects...)
}

// Len returns the number of recorded effects.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.effects)
}

// Reset forgets every effect; the next one recorded gets Seq 1.
func (l *Log) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.effects = nil
}

// recordIn appends e to l when l is not nil and returns it with its Seq.
func recordIn(l *Log, e Effect) Effect {
	if l == nil {
		return e
	}
	return l.Append(e)
}
