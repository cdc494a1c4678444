package pgfixture

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openAll opens n connections to db at once, as a check's workers would at
// worst, and returns the function that closes them.
func openAll(t *testing.T, ctx context.Context, db *DB, n int) func() {
	t.Helper()
	pcfg, err := pgxpool.ParseConfig("")
	require.NoError(t, err)
	pcfg.ConnConfig = db.ConnConfig()
	pcfg.MaxConns = int32(n)
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	require.NoError(t, err)
	conns := make([]*pgxpool.Conn, 0, n)
	for range n {
		c, err := pool.Acquire(ctx)
		require.NoError(t, err, "connection %d of %d", len(conns)+1, n)
		conns = append(conns, c)
	}
	// And the control pool's, all at once too.
	ctl := make([]*pgxpool.Conn, 0, controlPoolConns)
	for range controlPoolConns {
		c, err := db.Pool().Acquire(ctx)
		require.NoError(t, err)
		ctl = append(ctl, c)
	}
	return func() {
		for _, c := range append(conns, ctl...) {
			c.Release()
		}
		pool.Close()
	}
}

// smallServer starts a local server of the test's own with
// max_connections=40 (room for 29), stopped when the test ends.
func smallServer(t *testing.T) (context.Context, *Server) {
	t.Helper()
	needLocalBins(t)
	ctx := ctxT(t)
	srv, err := StartLocal(ctx, "max_connections=40")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close(context.Background())) })
	return ctx, srv
}

// TestConnectionLimitOnASmallServer runs check-sized workloads (24
// connections of their own and a fixture database's 4) on a server started
// with max_connections=40: room for 29, so one at a time. A reservation
// over the room fails at once; one that fits waits for the other and then
// really gets its connections; warm databases give theirs back to a
// waiting reservation; a connection refused because other clients took the
// slots is explained.
func TestConnectionLimitOnASmallServer(t *testing.T) {
	t.Parallel()
	ctx, srv := smallServer(t)
	require.Equal(t, "40", scalar[string](t, srv.admin, "SHOW max_connections"))
	require.Equal(t, connLimit{maxConnections: 40, superuserReserved: 3, adminPool: 8}, srv.limit)
	require.Equal(t, 29, srv.room.capacity())

	// Over the room: at once, with the numbers and the fix.
	_, err := srv.ReserveConnections(ctx, 30, "a load test")
	require.ErrorIs(t, err, ErrConnectionLimit)
	require.EqualError(t, err, "pgfixture: a load test may open up to 30 connections but the server at "+srv.URL()+" has room for 29 "+
		"(max_connections=40, minus 3 reserved for superusers, 0 held by other clients at start and 8 for pgfixture's admin pool); "+
		"raise max_connections to at least 41 (postgres -c max_connections=41, or ALTER SYSTEM SET max_connections = 41 and restart the server)")
	_, _, err = srv.CreateDBReserving(ctx, shopSchema, 26, `twice.Check of job "big"`)
	require.EqualError(t, err, `pgfixture: twice.Check of job "big" may open up to 30 connections (26 of its own and 4 for its fixture database's control pool) but the server at `+srv.URL()+" has room for 29 "+
		"(max_connections=40, minus 3 reserved for superusers, 0 held by other clients at start and 8 for pgfixture's admin pool); "+
		"raise max_connections to at least 41 (postgres -c max_connections=41, or ALTER SYSTEM SET max_connections = 41 and restart the server)")
	assert.Equal(t, 0, srv.room.inUse())

	// Check A fits and really gets its 28 connections.
	a, releaseA, err := srv.CreateDBReserving(ctx, shopSchema, 24, "check A")
	require.NoError(t, err)
	assert.Equal(t, 28, srv.room.inUse())
	closeA := openAll(t, ctx, a, 24)

	// Check B fits the room, not what is left: it waits.
	type created struct {
		db      *DB
		release func()
		err     error
	}
	bDone := make(chan created, 1)
	go func() {
		db, release, err := srv.CreateDBReserving(ctx, shopSchema, 24, "check B")
		bDone <- created{db, release, err}
	}()
	waitForWaiters(t, srv.room, 1)
	time.Sleep(50 * time.Millisecond)
	select {
	case b := <-bDone:
		t.Fatalf("check B did not wait for check A: %v", b.err)
	default:
	}

	// A ends: its database is not kept warm while B waits; B goes on and
	// really gets its 28.
	closeA()
	releaseA()
	aName := a.Name()
	require.NoError(t, a.Close(ctx, false))
	var b created
	select {
	case b = <-bDone:
	case <-time.After(30 * time.Second):
		t.Fatal("check B still waits after check A ended")
	}
	require.NoError(t, b.err)
	assert.NotContains(t, allDatabases(t, srv), aName, "A's database was dropped, not kept warm, while B waited")
	closeB := openAll(t, ctx, b.db, 24)
	closeB()
	b.release()
	assert.Equal(t, controlPoolConns, srv.room.inUse())

	// B's database is kept warm with its 4; a reservation of the whole room
	// drops it instead of waiting for ever.
	bName := b.db.Name()
	require.NoError(t, b.db.Close(ctx, false))
	require.Contains(t, allDatabases(t, srv), bName, "kept warm")
	assert.Equal(t, controlPoolConns, srv.room.inUse(), "a warm database keeps its control pool's connections")
	releaseAll, err := srv.ReserveConnections(ctx, 29, "everything")
	require.NoError(t, err)
	assert.NotContains(t, allDatabases(t, srv), bName, "the warm database was dropped for the reservation")
	releaseAll()
	assert.Equal(t, 0, srv.room.inUse())

	// Other clients take every slot after the start: PostgreSQL's "too many
	// clients" is explained.
	var others []*pgx.Conn
	defer func() {
		for _, c := range others {
			_ = c.Close(context.Background())
		}
	}()
	for len(others) < 40 {
		c, err := pgx.ConnectConfig(ctx, srv.adminCfg.Copy())
		if err != nil {
			require.Equal(t, "53300", sqlStateOf(err), "%v", err)
			break
		}
		others = append(others, c)
	}
	_, err = srv.CreateDB(ctx, SQL("CREATE TABLE crowded (id int)"))
	require.ErrorIs(t, err, ErrTooManyClients)
	require.Equal(t, "53300", sqlStateOf(err), "PostgreSQL's error is still there")
	require.ErrorContains(t, err, "pgfixture: the server at "+srv.URL()+" refused a connection: sorry, too many clients already (SQLSTATE 53300). "+
		"pgfixture keeps within the 29 connections it had room for at start (max_connections=40, minus 3 reserved for superusers, 0 held by other clients at start and 8 for pgfixture's admin pool), "+
		"so other clients connected since (another test binary on the same server? go test runs packages in parallel); "+
		"raise max_connections (postgres -c max_connections=N, or ALTER SYSTEM SET max_connections = N and restart the server), "+
		"close the other clients, or run fewer checks at once (go test -parallel N, -p N); the error was: ")
	assert.Equal(t, 0, srv.room.inUse(), "a failed CreateDB gives its connections back")
}

func sqlStateOf(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// A Server made while other clients crowd the server has little room; once
// they leave, a request larger than that room looks again instead of
// failing for good.
func TestRoomIsMeasuredAgainWhenOtherClientsLeave(t *testing.T) {
	t.Parallel()
	ctx, srv := smallServer(t)

	others := make([]*pgx.Conn, 0, 20)
	closeOthers := func() {
		for _, c := range others {
			_ = c.Close(context.Background())
		}
		others = others[:0]
	}
	defer closeOthers()
	for range 20 {
		c, err := pgx.ConnectConfig(ctx, srv.adminCfg.Copy())
		require.NoError(t, err)
		others = append(others, c)
	}
	late, err := newServerFromDSN(ctx, "dsn", rawAdminURL(srv), nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, late.Close(context.Background())) }()
	room := late.room.capacity()
	require.LessOrEqual(t, room, 29-20, "the 20 other clients are not room")

	_, err = late.ReserveConnections(ctx, 20, "a check")
	require.ErrorIs(t, err, ErrConnectionLimit, "while the others are connected")
	require.Equal(t, room, late.room.capacity())

	var pids []uint32
	for _, c := range others {
		pids = append(pids, c.PgConn().PID())
	}
	closeOthers()
	// A backend exits a moment after its client closes: wait until the
	// server has let all twenty go.
	require.Eventually(t, func() bool {
		return scalar[int](t, srv.admin, `SELECT count(*)::int FROM pg_stat_activity WHERE pid = ANY($1::int[])`, pids) == 0
	}, 10*time.Second, 10*time.Millisecond, "the other clients' backends are gone")
	release, err := late.ReserveConnections(ctx, 20, "a check")
	require.NoError(t, err, "the room was measured again")
	release()
	require.GreaterOrEqual(t, late.room.capacity(), 20)
	require.Equal(t, late.room.capacity(), late.connLimit().room())
}

// waitForWaiters waits until n requests wait in b's line.
func waitForWaiters(t *testing.T, b *connRoom, n int) {
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
func acquireAsync(ctx context.Context, b *connRoom, n int) <-chan error {
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
	b := newConnRoom(10, nil)
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
	b := newConnRoom(10, nil)
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
	var b *connRoom
	reclaims := 0
	b = newConnRoom(12, func() bool {
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
	s.room = newConnRoom(lim.room(), nil)
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
	assert.Equal(t, 0, s.room.inUse())

	release, err := s.ReserveConnections(ctx, 24, "all of it")
	require.NoError(t, err)
	release()
	release() // once only
	assert.Equal(t, 0, s.room.inUse())

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
	waitForWaiters(t, s.room, 1)

	cctx, cancel := context.WithCancel(ctx)
	third := make(chan error, 1)
	go func() {
		_, err := s.ReserveConnections(cctx, 1, "a late small one")
		third <- err
	}()
	waitForWaiters(t, s.room, 2)
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
	assert.Equal(t, 28, s.room.inUse())
	r.release()
	assert.Equal(t, 0, s.room.inUse())
	assert.False(t, errors.Is(err, ErrConnectionLimit), "waiting too long is not over the limit")
}
