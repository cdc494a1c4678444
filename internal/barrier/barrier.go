// Package barrier holds the differential suites' entry barrier: it makes
// an engine's real workers run copies of a job at once, or fails the test
// when they never do.
package barrier

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// Timeout is how long the first callers of an Entry wait for the others.
const Timeout = 10 * time.Second

// ErrTimedOut is what a caller of an Entry gets when the others never
// came within Timeout.
var ErrTimedOut = errors.New("the barrier timed out")

// Entry returns a one-shot barrier. The first n callers wait until all n
// are there; later callers (a retry) pass at once. When the n never meet
// within Timeout, tb gets an error that the n copies were never inside
// where at once, and the waiting callers get ErrTimedOut. A caller whose
// ctx ends gets ctx's error.
func Entry(tb testing.TB, n int, where string) func(context.Context) error {
	var mu sync.Mutex
	arrived, all := 0, make(chan struct{})
	return func(ctx context.Context) error {
		mu.Lock()
		arrived++
		switch {
		case arrived == n:
			close(all)
		case arrived > n:
			mu.Unlock()
			return nil
		}
		mu.Unlock()
		timer := time.NewTimer(Timeout)
		defer timer.Stop()
		select {
		case <-all:
			return nil
		case <-timer.C:
			tb.Errorf("the %d copies were never inside %s at once", n, where)
			return ErrTimedOut
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
