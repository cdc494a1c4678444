package sessionstate

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/pgfixture"
)

// inject.Worker.Fresh keeps an idle session of the worker's pool and resets
// it to what a new session holds (the application's AfterConnect run
// again, pgx's statement cache and buffered notifications emptied), and
// ends the sessions it cannot reset so: one that listens, one left in a
// transaction, one where an attempt defined a custom setting.
func TestFreshKeepsAnIdleSessionAsANewOne(t *testing.T) {
	db := pgfixture.New(t, pgfixture.SQL("CREATE TABLE t (id int)"))
	ctx := inject.ConnSetup(context.Background()) // statements of no attempt
	setUps := 0
	w, err := inject.NewWorkerConfigured(db.ConnConfig(), func(cfg *pgxpool.Config) {
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			setUps++
			_, err := c.Exec(ctx, "SET work_mem = '3MB'")
			return err
		}
	})
	require.NoError(t, err)
	defer w.Close()
	var setUp SetUp
	setUp.Watch(w)

	const cached = "SELECT count(*) FROM t WHERE id = $1" // pgx prepares it and caches the statement
	used, err := w.Pool.Acquire(ctx)
	require.NoError(t, err)
	listens, err := w.Pool.Acquire(ctx)
	require.NoError(t, err)
	open, err := w.Pool.Acquire(ctx)
	require.NoError(t, err)
	custom, err := w.Pool.Acquire(ctx)
	require.NoError(t, err)
	pidOf := func(c *pgxpool.Conn) uint32 { return c.Conn().PgConn().PID() }
	usedPID, listensPID, openPID, customPID := pidOf(used), pidOf(listens), pidOf(open), pidOf(custom)
	start := setUp.start[usedPID]
	for _, sql := range []string{
		"CREATE TEMP TABLE scratch (x int)",
		"SELECT pg_advisory_lock(42)",
		"SET work_mem = '7MB'",
		"PREPARE q AS SELECT 1",
	} {
		_, err := used.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		require.NoError(t, err, sql)
	}
	var n int
	require.NoError(t, used.QueryRow(ctx, cached, 1).Scan(&n))
	// A notification pgx buffered on a LISTEN that ended.
	for _, sql := range []string{"LISTEN parcels", "NOTIFY parcels", "UNLISTEN parcels", "SELECT 1"} {
		_, err := used.Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
	actx, run := inject.Start(context.Background(), "attempt 1 of job-1", inject.Plan{})
	_, err = custom.Exec(actx, "BEGIN; SET LOCAL app.tenant = 'acme'; COMMIT", pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	run.Finish()
	custom.Release()
	_, err = listens.Exec(ctx, "LISTEN orders")
	require.NoError(t, err)
	_, err = open.Exec(ctx, "BEGIN")
	require.NoError(t, err)
	used.Release()
	listens.Release()
	defer open.Release()

	// A release lands on a goroutine of its own: Fresh sees the sessions
	// given back by then (it waits at most 100 ms while one is held).
	require.Eventually(t, func() bool { return w.Pool.Stat().IdleConns() == 3 }, 10*time.Second, time.Millisecond)
	kept := w.Fresh(ctx)
	require.Equal(t, []uint32{usedPID}, kept)

	c, err := w.Pool.Acquire(ctx)
	require.NoError(t, err)
	defer c.Release()
	require.Equal(t, usedPID, pidOf(c), "the kept session is the one the pool hands out")
	_, state, err := Read(ctx, c.Conn(), true)
	require.NoError(t, err)
	require.Equal(t, start, state, "the session holds what it held once AfterConnect had set it up")
	var workMem string
	require.NoError(t, c.QueryRow(ctx, "SHOW work_mem").Scan(&workMem))
	require.Equal(t, "3MB", workMem, "the application's AfterConnect ran again")
	require.Equal(t, 5, setUps, "four new sessions, one reset")
	require.NoError(t, c.QueryRow(ctx, cached, 1).Scan(&n), "pgx prepares its cached statement again")
	nctx, cancel := context.WithCancel(ctx)
	cancel()
	notification, _ := c.Conn().WaitForNotification(nctx)
	require.Nil(t, notification, "no notification of an earlier scenario waits in pgx's buffer")

	deadline := time.Now().Add(10 * time.Second)
	for {
		var pids []int32
		require.NoError(t, db.Pool().QueryRow(ctx, "SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity WHERE datname = $1", db.Name()).Scan(&pids))
		if !slices.Contains(pids, int32(listensPID)) && !slices.Contains(pids, int32(openPID)) && !slices.Contains(pids, int32(customPID)) {
			break
		}
		require.True(t, time.Now().Before(deadline), "the listening session, the one in a transaction and the one with a custom setting were not ended: %v", pids)
		time.Sleep(time.Millisecond)
	}
}

// Why inject.Worker.Fresh ends a session where a custom setting was
// defined: DISCARD ALL (RESET ALL) leaves the setting defined, as an empty
// string, where a new session has none (NULL), so a job reading it with
// current_setting(name, true) would see another value than in the
// reference run.
func TestDiscardAllLeavesACustomSettingDefined(t *testing.T) {
	db := pgfixture.New(t, pgfixture.SQL("CREATE TABLE t (id int)"))
	ctx := context.Background()
	c, err := pgx.ConnectConfig(ctx, db.ConnConfig())
	require.NoError(t, err)
	defer c.Close(ctx)
	tenant := func() *string {
		var v *string
		require.NoError(t, c.QueryRow(ctx, "SELECT current_setting('app.tenant', true)", pgx.QueryExecModeSimpleProtocol).Scan(&v))
		return v
	}
	require.Nil(t, tenant(), "a new session has no app.tenant")
	_, err = c.Exec(ctx, "BEGIN; SET LOCAL app.tenant = 'acme'; COMMIT", pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	_, err = c.Exec(ctx, "DISCARD ALL", pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	require.NotNil(t, tenant(), "after DISCARD ALL app.tenant is still defined")
	require.Equal(t, "", *tenant())
}
