package twice

import (
	"context"
	"testing"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessionstate"
)

// BenchmarkFreshSessions measures what fresh sessions add to a scenario:
// one attempt of the 6-statement job on the warm worker, the same after
// FreshSessions (the worker's idle sessions reset in place), and the same
// after EndSessions (the worker's sessions ended and waited for, then
// dialed again by the attempt: how every scenario started before).
func BenchmarkFreshSessions(b *testing.B) {
	ctx := context.Background()
	c, err := newChecker(ctx, benchJob, newConfig(nil))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.Close(ctx, false) }()
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
			if err := c.FreshSessions(ctx); err != nil {
				b.Fatal(err)
			}
			attempt(b)
		}
	})
	b.Run("ended", func(b *testing.B) {
		for b.Loop() {
			if err := c.EndSessions(ctx); err != nil {
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
	defer func() { _ = c.Close(ctx, false) }()
	attempt := func(b *testing.B, number int) {
		if rec := c.runAttempt(ctx, job1, number, inject.Plan{}, false); rec.Err != nil {
			b.Fatal(rec.Err)
		}
	}
	attempt(b, 1) // warm
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			c.Mu.Lock()
			c.Ran, c.Left = nil, sessionstate.Left{}
			c.Mu.Unlock()
			attempt(b, 1)
		}
	})
	b.Run("redelivery", func(b *testing.B) {
		for b.Loop() {
			c.Mu.Lock()
			c.Ran, c.Left = c.Ran[:0], sessionstate.Left{}
			c.Mu.Unlock()
			attempt(b, 1)
			attempt(b, 2)
		}
	})
	b.Run("redelivery-no-look", func(b *testing.B) {
		for b.Loop() {
			c.Mu.Lock()
			c.Ran, c.Left = nil, sessionstate.Left{}
			c.Mu.Unlock()
			attempt(b, 1)
			c.Mu.Lock()
			c.Ran = nil
			c.Mu.Unlock()
			attempt(b, 2)
		}
	})
}
