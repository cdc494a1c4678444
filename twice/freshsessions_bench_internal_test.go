package twice

import (
	"context"
	"testing"

	"github.com/twicekit/twicekit/internal/inject"
)

// BenchmarkFreshSessions measures what fresh sessions add to a scenario:
// one attempt of the 6-statement job on the warm worker, and the same after
// freshSessions (the worker's sessions ended and waited for, then dialed
// again by the attempt).
func BenchmarkFreshSessions(b *testing.B) {
	ctx := context.Background()
	c, err := newChecker(ctx, benchJob, newConfig(nil))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.close(ctx, false) }()
	attempt := func(b *testing.B) {
		if rec := c.runAttempt(ctx, job1, 1, inject.Plan{}, false); rec.Err != nil {
			b.Fatal(rec.Err)
		}
	}
	b.Run("warm", func(b *testing.B) {
		for b.Loop() {
			attempt(b)
		}
	})
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			if err := c.freshSessions(ctx); err != nil {
				b.Fatal(err)
			}
			attempt(b)
		}
	})
}
