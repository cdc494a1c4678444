package twice

import (
	"context"
	"testing"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessionstate"
)

// BenchmarkFreshSessions measures what fresh sessions add to a scenario:
// one attempt of the 6-statement job on the warm worker, the same after
// freshSessions (the worker's idle sessions reset in place), and the same
// after endSessions (the worker's sessions ended and waited for, then
// dialed again by the attempt: how every scenario started before).
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
	b.Run("ended", func(b *testing.B) {
		for b.Loop() {
			if err := c.endSessions(ctx); err != nil {
				b.Fatal(err)
			}
			attempt(b)
		}
	})
}

// BenchmarkSessionStateLook measures what the look at a worker's sessions
// adds to a redelivery: one attempt of the 6-statement job on the warm
// worker as a first delivery (no look), and as a redelivery (the worker's
// idle sessions read first).
func BenchmarkSessionStateLook(b *testing.B) {
	ctx := context.Background()
	c, err := newChecker(ctx, benchJob, newConfig(nil))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.close(ctx, false) }()
	attempt := func(b *testing.B, number int) {
		if rec := c.runAttempt(ctx, job1, number, inject.Plan{}, false); rec.Err != nil {
			b.Fatal(rec.Err)
		}
	}
	attempt(b, 1) // warm
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			c.mu.Lock()
			c.ran, c.left = nil, sessionstate.Left{}
			c.mu.Unlock()
			attempt(b, 1)
		}
	})
	b.Run("redelivery", func(b *testing.B) {
		for b.Loop() {
			c.mu.Lock()
			c.ran, c.left = c.ran[:0], sessionstate.Left{}
			c.mu.Unlock()
			attempt(b, 1)
			attempt(b, 2)
		}
	})
	b.Run("redelivery-no-look", func(b *testing.B) {
		for b.Loop() {
			c.mu.Lock()
			c.ran, c.left = nil, sessionstate.Left{}
			c.mu.Unlock()
			attempt(b, 1)
			c.mu.Lock()
			c.ran = nil
			c.mu.Unlock()
			attempt(b, 2)
		}
	})
}
