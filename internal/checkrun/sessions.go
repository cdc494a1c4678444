package checkrun

import (
	"context"

	"github.com/twicekit/twicekit/faults"
)

// Looks are one scenario's looks at the sessions the check did not open,
// each a session of type S: watched while the reference run's attempt
// runs and looked at, settled, at each of its points (Watch); looked at,
// settled, when any scenario's attempts are over (End). A look that
// failed is never taken for "no session".
type Looks[S any] struct {
	Settled func(ctx context.Context) ([]S, error) // the sessions open now, settled
	Merge   func(a, more []S) []S                  // a with the sessions of more it misses

	end      func() []S
	atPoints []S
	err      error
}

// Watch returns the wait of the reference run's points: a look at the
// sessions, then inner (may be nil); then it starts the watch (start),
// whose end returns every session it saw.
func (l *Looks[S]) Watch(inner func(context.Context, faults.Step) error, start func() (end func() []S)) func(context.Context, faults.Step) error {
	wait := func(ctx context.Context, st faults.Step) error {
		ss, err := l.Settled(ctx)
		l.atPoints = l.Merge(l.atPoints, ss)
		if err != nil && l.err == nil {
			l.err = err
		}
		if inner != nil {
			return inner(ctx, st)
		}
		return nil
	}
	l.end = start()
	return wait
}

// End ends the watch, if any, and returns the sessions the scenario saw:
// seen, or the watch's and those at the points, with those open once its
// attempts are over. playErr, or a look that failed, is its error.
func (l *Looks[S]) End(ctx context.Context, seen []S, playErr error) ([]S, error) {
	if l.end != nil {
		seen = l.Merge(l.atPoints, l.end())
	}
	if playErr != nil {
		return nil, playErr
	}
	if l.err != nil {
		return nil, l.err
	}
	settled, err := l.Settled(ctx)
	if err != nil {
		return nil, err
	}
	return l.Merge(seen, settled), nil
}
