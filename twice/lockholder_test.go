package twice_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/twice"
)

// An attempt waiting for a lock past AttemptTimeout is reported with the
// lock's holder: an attempt of the scenario and its statement that took
// it, the attempt itself on another connection, or a session the check
// did not open (issue 30).

const lockOrder = `SELECT notified FROM orders WHERE id = 6735 FOR UPDATE`

func lockWait(t *testing.T, rep *twice.Report) string {
	t.Helper()
	require.NoError(t, rep.Err)
	require.Len(t, rep.Findings, 1, rep.String())
	for _, p := range rep.Findings[0].Problems {
		if p.Kind == twice.ProblemSlow {
			return p.Text
		}
	}
	require.Fail(t, "no slow attempt", rep.String())
	return ""
}

// notifyLocked locks the order, emails, then marks it. With leak, an error
// from the mailer returns with the transaction (and its row lock) still
// open (kept in left for the test to end once the check is done); without,
// the deferred rollback ends it.
func notifyLocked(leak bool, left *leftOpen) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		tx, err := a.Pool.Begin(ctx)
		if err != nil {
			return err
		}
		if leak {
			left.keep(tx)
		} else {
			defer func() { _ = tx.Rollback(ctx) }()
		}
		var notified bool
		if err := tx.QueryRow(ctx, lockOrder).Scan(&notified); err != nil || notified {
			return err
		}
		if err := a.Mailer.Send(ctx, shippedEmail); err != nil {
			return err // with leak: the transaction stays open
		}
		if _, err := tx.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735`); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
}

// leftOpen keeps the transactions a job left open, for the test to end
// once the check is done (so no pool of the check waits for them).
type leftOpen struct {
	mu  sync.Mutex
	txs []pgx.Tx
}

func (l *leftOpen) keep(tx pgx.Tx) {
	l.mu.Lock()
	l.txs = append(l.txs, tx)
	l.mu.Unlock()
}

func (l *leftOpen) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, tx := range l.txs {
		_ = tx.Rollback(context.Background())
	}
	l.txs = nil
}

// TestALockWaitNamesTheAttemptHoldingIt: the first delivery returns on a
// lost reply with its transaction open; the redelivery waits for its row
// lock, and the report names the first delivery and its statement that
// took the lock. The twin that rolls back on every path passes. (The check
// ends although a pool connection was never given back.)
func TestALockWaitNamesTheAttemptHoldingIt(t *testing.T) {
	t.Parallel()
	left := &leftOpen{}
	defer left.end()
	opts := []twice.Option{twice.AttemptTimeout(time.Second), twice.EffectPolicy(effects.KindEmail, effects.AtLeastOnce), twice.Only("reply-lost@3")}
	rep := twice.Check(context.Background(), orderJob("notify, transaction left open", notifyLocked(true, left)), opts...)
	require.Equal(t, "attempt 2 of job-1 was still waiting in PostgreSQL after AttemptTimeout (1s): point 2 ("+lockOrder+") waits for a lock held by "+
		"attempt 1 of job-1 (its point 2: "+lockOrder+"; it had returned with that transaction still open). "+
		"A lock is released only when its holder's transaction ends: end every transaction on every path (defer tx.Rollback(ctx)), "+
		"take locks in one transaction on one connection, and give a holder that is only slow more time with twice.AttemptTimeout(d); "+
		"its connections were cut and its context cancelled", lockWait(t, rep))

	rep = twice.Check(context.Background(), orderJob("notify, transaction rolled back", notifyLocked(false, left)), opts...)
	require.True(t, rep.OK(), rep.String())
}

// TestALockWaitOnItselfNamesTheAttempt: a job that locks a row in a
// transaction, then updates it on the pool outside that transaction, waits
// for itself.
func TestALockWaitOnItselfNamesTheAttempt(t *testing.T) {
	t.Parallel()
	mark := func(inTx bool) func(ctx context.Context, a *twice.Attempt) error {
		return func(ctx context.Context, a *twice.Attempt) error {
			tx, err := a.Pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback(ctx) }()
			var notified bool
			if err := tx.QueryRow(ctx, lockOrder).Scan(&notified); err != nil || notified {
				return err
			}
			q := a.Pool.Exec
			if inTx {
				q = tx.Exec
			}
			if _, err := q(ctx, `UPDATE orders SET notified = true WHERE id = 6735`); err != nil {
				return err
			}
			return tx.Commit(ctx)
		}
	}
	rep := twice.Check(context.Background(), orderJob("mark outside the transaction", mark(false)), twice.AttemptTimeout(time.Second))
	require.Equal(t, "once", rep.Findings[0].Token)
	require.Contains(t, lockWait(t, rep), "attempt 1 of job-1 was still waiting in PostgreSQL after AttemptTimeout: point 3 (UPDATE orders SET notified = true WHERE id = 6735) waits for a lock held by "+
		"attempt 1 of job-1 itself, on another of its connections (its point 2: "+lockOrder+"). ")

	rep = twice.Check(context.Background(), orderJob("mark in the transaction", mark(true)), twice.AttemptTimeout(time.Second))
	require.True(t, rep.OK(), rep.String())
}

// TestALockWaitOnAnOutsideSessionNamesIt: the holder is a connection the
// job opened itself: named by its application_name, without its PID, the
// same text run after run.
func TestALockWaitOnAnOutsideSessionNamesIt(t *testing.T) {
	t.Parallel()
	job := orderJob("lock on its own connection", func(ctx context.Context, a *twice.Attempt) error {
		cfg, err := pgx.ParseConfig(a.Pool.Config().ConnString())
		if err != nil {
			return err
		}
		cfg.RuntimeParams["application_name"] = "billing-cron"
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(context.Background()) }()
		if _, err := tx.Exec(ctx, lockOrder); err != nil {
			return err
		}
		_, err = a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735`)
		return err
	})
	var texts []string
	for range 2 {
		rep := twice.Check(context.Background(), job, twice.AttemptTimeout(time.Second))
		texts = append(texts, lockWait(t, rep))
	}
	require.Contains(t, texts[0], "point 1 (UPDATE orders SET notified = true WHERE id = 6735) waits for a lock held by a session the check did not open (application_name billing-cron). ")
	require.Equal(t, texts[0], texts[1])
}

// keepsSessionLock takes a session advisory lock and returns without
// unlocking it: its session, back in the worker's pool, still holds it.
func keepsSessionLock(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `SELECT pg_advisory_lock(4242)`); err != nil {
		return err
	}
	_, err := a.Pool.Exec(ctx, `UPDATE customers SET points = 50 WHERE id = 77`)
	return err
}

// A session advisory lock that a returned attempt's session still holds is
// named as such, by its key, with the attempt that blocked on it; not as a
// wait "outside PostgreSQL" (issue 43).
func TestASessionLockHeldAfterReturnIsNamed(t *testing.T) {
	t.Parallel()
	rep := check(t, loyaltyJob("keeps a session lock", keepsSessionLock), twice.AttemptTimeout(2*time.Second), twice.Only("concurrent:A2B2"))
	require.Len(t, rep.Findings, 1, rep.String())
	f := rep.Findings[0]
	require.Equal(t, "an attempt is stuck: concurrent: two deliveries of the same job at once, interleaved A2B2 (A is the first delivery, B the second)", f.Headline)
	require.Equal(t, []string{"attempt 2 of job-1 (B) waited in PostgreSQL for 2s (AttemptTimeout) at point 1 (SELECT pg_advisory_lock(4242)) " +
		"for the session advisory lock (4242), which the session of attempt 1 of job-1 (A) still held after A returned: " +
		"a session advisory lock is released by pg_advisory_unlock or the end of its session, not by the end of its transaction or of the attempt; " +
		"unlock it on every path, or take pg_advisory_xact_lock, which the end of its transaction releases; where the attempts were:\n" +
		"    attempt 1 of job-1 (A): returned, its session still holding the session advisory lock (4242)\n" +
		"    attempt 2 of job-1 (B): blocked in PostgreSQL on the session advisory lock (4242) of A at point 1 (SELECT pg_advisory_lock(4242))\n" +
		"  the check crashed B (connections cut, context cancelled) and did not redeliver"}, problems(f))
	require.Contains(t, f.Timeline, "|      STUCK (on the session advisory lock (4242), held by A's session after it returned)\n")
	require.NotContains(t, rep.String(), "outside PostgreSQL")
	require.NotContains(t, rep.String(), "waited on no lock")
}
