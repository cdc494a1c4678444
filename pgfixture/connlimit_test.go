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
	require.Equal(t, 29, srv.budget.capacity())

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
	assert.Equal(t, 0, srv.budget.inUse())

	// Check A fits and really gets its 28 connections.
	a, releaseA, err := srv.CreateDBReserving(ctx, shopSchema, 24, "check A")
	require.NoError(t, err)
	assert.Equal(t, 28, srv.budget.inUse())
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
	waitForWaiters(t, srv.budget, 1)
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
	assert.Equal(t, controlPoolConns, srv.budget.inUse())

	// B's database is kept warm with its 4; a reservation of the whole room
	// drops it instead of waiting for ever.
	bName := b.db.Name()
	require.NoError(t, b.db.Close(ctx, false))
	require.Contains(t, allDatabases(t, srv), bName, "kept warm")
	assert.Equal(t, controlPoolConns, srv.budget.inUse(), "a warm database keeps its control pool's connections")
	releaseAll, err := srv.ReserveConnections(ctx, 29, "everything")
	require.NoError(t, err)
	assert.NotContains(t, allDatabases(t, srv), bName, "the warm database was dropped for the reservation")
	releaseAll()
	assert.Equal(t, 0, srv.budget.inUse())

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
	assert.Equal(t, 0, srv.budget.inUse(), "a failed CreateDB gives its connections back")
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
	room := late.budget.capacity()
	require.LessOrEqual(t, room, 29-20, "the 20 other clients are not room")

	_, err = late.ReserveConnections(ctx, 20, "a check")
	require.ErrorIs(t, err, ErrConnectionLimit, "while the others are connected")
	require.Equal(t, room, late.budget.capacity())

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
	require.GreaterOrEqual(t, late.budget.capacity(), 20)
	require.Equal(t, late.budget.capacity(), late.connLimit().room())
}
