package pgfixture

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitForWaiters waits until n requests wait in b's line.
func waitForWaiters(t *testing.T, b *connBudget, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b.mu.Lock()
		got := b.waiters.Len()
		b.mu.Unlock()
		if got == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%d requests never waited in line", n)
}

// acquireAsync starts acquire(n) and returns the channel of its result.
func acquireAsync(ctx context.Context, b *connBudget, n int) <-chan error {
	done := make(chan error, 1)
	go func() { done <- b.acquire(ctx, n) }()
	return done
}

func requireWaiting(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s returned (%v) but should wait", what, err)
	default:
	}
}

func requireGranted(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		require.NoError(t, err, what)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still waits", what)
	}
}

func TestConnBudgetWaitsInLineAndGrantsOnRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newConnBudget(10, nil)
	require.NoError(t, b.acquire(ctx, 6))

	big := acquireAsync(ctx, b, 8)
	waitForWaiters(t, b, 1)
	small := acquireAsync(ctx, b, 2)
	waitForWaiters(t, b, 2)
	requireWaiting(t, big, "8 of 10 with 6 taken")
	requireWaiting(t, small, "2 behind a waiting 8, although 4 are free")
	assert.False(t, b.tryAcquire(1), "nobody overtakes the line")
	assert.Equal(t, 6, b.inUse())

	b.release(6)
	requireGranted(t, big, "8 after the 6 came back")
	requireGranted(t, small, "2 after the 8: 10 in all")
	assert.Equal(t, 10, b.inUse())
	assert.False(t, b.waiting())

	b.release(10)
	assert.True(t, b.tryAcquire(10))
	assert.Panics(t, func() { b.release(11) }, "more given back than taken")
}

func TestConnBudgetCancelledWaiterLeavesTheLine(t *testing.T) {
	t.Parallel()
	b := newConnBudget(10, nil)
	require.NoError(t, b.acquire(context.Background(), 6))
	cctx, cancel := context.WithCancel(context.Background())
	big := acquireAsync(cctx, b, 8)
	waitForWaiters(t, b, 1)
	small := acquireAsync(context.Background(), b, 3)
	waitForWaiters(t, b, 2)
	requireWaiting(t, small, "3 behind a waiting 8")

	cancel()
	select {
	case err := <-big:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled request still waits")
	}
	requireGranted(t, small, "3 of the 4 free once the 8 left the line")
	assert.Equal(t, 9, b.inUse(), "the cancelled request holds nothing")

	// A deadline ends a wait the same way.
	dctx, dcancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer dcancel()
	err := b.acquire(dctx, 2)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 9, b.inUse())
	assert.False(t, b.waiting())
}

func TestConnBudgetReclaimsIdleBeforeWaiting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	idle := []int{4, 4} // two warm databases' control pools
	var b *connBudget
	reclaims := 0
	b = newConnBudget(12, func() bool {
		reclaims++
		if len(idle) == 0 {
			return false
		}
		b.release(idle[0])
		idle = idle[1:]
		return true
	})
	require.NoError(t, b.acquire(ctx, 8)) // the warm ones
	require.NoError(t, b.acquire(ctx, 4)) // a busy one
	require.NoError(t, b.acquire(ctx, 4), "one warm database is dropped for it")
	assert.Equal(t, []int{4}, idle, "only as many as needed")
	assert.Equal(t, 1, reclaims)
	assert.Equal(t, 12, b.inUse())

	dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.acquire(dctx, 8), context.DeadlineExceeded, "the last warm one is not enough: wait for busy ones")
	assert.Empty(t, idle)
	assert.Equal(t, 8, b.inUse())
}

// limitServer is a Server with only what the reservation errors read.
func limitServer(t *testing.T, lim connLimit) *Server {
	t.Helper()
	cfg, err := pgx.ParseConfig("postgres://ci:s3cret-pw@db.example:5432/postgres?sslmode=disable")
	require.NoError(t, err)
	s := &Server{adminCfg: cfg, scrub: newScrubber("s3cret-pw"), limit: lim}
	s.budget = newConnBudget(lim.room(), nil)
	return s
}

func TestReservationLargerThanTheServerFailsAtOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := limitServer(t, connLimit{maxConnections: 40, superuserReserved: 3, otherClients: 5, adminPool: 8})
	_, err := s.ReserveConnections(ctx, 25, "the nightly load test")
	require.ErrorIs(t, err, ErrConnectionLimit)
	require.EqualError(t, err, "pgfixture: the nightly load test may open up to 25 connections but the server at "+
		"postgres://ci:xxxxx@db.example:5432/postgres?sslmode=disable has room for 24 "+
		"(max_connections=40, minus 3 reserved for superusers, 5 held by other clients at start and 8 for pgfixture's admin pool); "+
		"raise max_connections to at least 41 (postgres -c max_connections=41, or ALTER SYSTEM SET max_connections = 41 and restart the server), "+
		"or close some of the 5 other client connections")
	assert.Equal(t, 0, s.budget.inUse())

	release, err := s.ReserveConnections(ctx, 24, "all of it")
	require.NoError(t, err)
	release()
	release() // once only
	assert.Equal(t, 0, s.budget.inUse())

	// PostgreSQL 16's reserved_connections; nothing left at all.
	s = limitServer(t, connLimit{maxConnections: 10, superuserReserved: 3, roleReserved: 2, otherClients: 0, adminPool: 8})
	_, err = s.ReserveConnections(ctx, 4, "a fixture database")
	require.EqualError(t, err, "pgfixture: a fixture database may open up to 4 connections but the server at "+
		"postgres://ci:xxxxx@db.example:5432/postgres?sslmode=disable has room for 0 "+
		"(max_connections=10, minus 3 reserved for superusers, 2 reserved for pg_use_reserved_connections, 0 held by other clients at start and 8 for pgfixture's admin pool); "+
		"raise max_connections to at least 17 (postgres -c max_connections=17, or ALTER SYSTEM SET max_connections = 17 and restart the server)")
}

func TestReservationThatFitsWaitsForItsTurn(t *testing.T) {
	t.Parallel()
	s := limitServer(t, connLimit{maxConnections: 40, superuserReserved: 3, adminPool: 8}) // room for 29
	ctx := context.Background()
	first, err := s.ReserveConnections(ctx, 28, "check A")
	require.NoError(t, err)
	type result struct {
		release func()
		err     error
	}
	second := make(chan result, 1)
	go func() {
		r, err := s.ReserveConnections(ctx, 28, "check B")
		second <- result{r, err}
	}()
	waitForWaiters(t, s.budget, 1)

	cctx, cancel := context.WithCancel(ctx)
	third := make(chan error, 1)
	go func() {
		_, err := s.ReserveConnections(cctx, 1, "a late small one")
		third <- err
	}()
	waitForWaiters(t, s.budget, 2)
	cancel()
	err = <-third
	require.ErrorIs(t, err, context.Canceled)
	require.EqualError(t, err, "pgfixture: a late small one gave up waiting for 1 of the 29 connections the server at "+
		"postgres://ci:xxxxx@db.example:5432/postgres?sslmode=disable has room for (28 were reserved by other fixture databases and checks): context canceled")

	select {
	case r := <-second:
		t.Fatalf("check B did not wait for check A: %v", r.err)
	default:
	}
	first()
	r := <-second
	require.NoError(t, r.err)
	assert.Equal(t, 28, s.budget.inUse())
	r.release()
	assert.Equal(t, 0, s.budget.inUse())
	assert.False(t, errors.Is(err, ErrConnectionLimit), "waiting too long is not over the limit")
}
