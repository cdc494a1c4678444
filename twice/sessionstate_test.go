package twice_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/twice"
)

// A redelivery reuses the worker's sessions, as a pooled production
// connection would; a finding whose redelivery started on a session an
// earlier delivery left state on says what that state was (issue 30).

// scratchTotals adds a customer's points up in a temporary table, then
// writes the total. Without ON COMMIT DROP the table outlives the delivery
// on its session, and a redelivery on that session fails to create it again.
func scratchTotals(onCommitDrop bool) func(ctx context.Context, a *twice.Attempt) error {
	create := `CREATE TEMP TABLE scratch_totals (customer_id bigint, points int)`
	if onCommitDrop {
		create += ` ON COMMIT DROP`
	}
	return func(ctx context.Context, a *twice.Attempt) error {
		tx, err := a.Pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		for _, q := range []string{
			create,
			`INSERT INTO scratch_totals VALUES (77, 50)`,
			`UPDATE customers c SET points = s.points FROM scratch_totals s WHERE c.id = s.customer_id`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return tx.Commit(ctx)
	}
}

const leftTempTable = "attempt 2 of job-1, attempt 3 of job-1 and attempt 4 of job-1 started on a session where attempt 1 of job-1 left temporary table scratch_totals: " +
	"a production pool may hand a redelivery the session an earlier delivery used, or a fresh one"

func TestATempTableARedeliveryTripsOnIsNamedAndOnCommitDropPasses(t *testing.T) {
	t.Parallel()
	opts := []twice.Option{twice.Only("sequential"), twice.MaxDeliveries(3)}
	rep, tokens := findingTokens(t, loyaltyJob("scratch totals", scratchTotals(false)), opts...)
	require.Equal(t, []string{"sequential"}, tokens, rep.String())
	text := rep.String()
	require.Contains(t, text, `relation "scratch_totals" already exists`)
	require.Contains(t, text, leftTempTable)
	var states []string
	for _, sr := range rep.Scenarios {
		for _, at := range sr.Attempts {
			states = append(states, at.SessionState)
		}
	}
	require.Equal(t, []string{"", "attempt 1 of job-1 left temporary table scratch_totals",
		"attempt 1 of job-1 left temporary table scratch_totals", "attempt 1 of job-1 left temporary table scratch_totals"}, states)
	again, _ := findingTokens(t, loyaltyJob("scratch totals", scratchTotals(false)), opts...)
	require.Equal(t, text, again.String(), "the same text run after run")

	// The second copy of a duplicate enqueue starts on the first one's session.
	rep, tokens = findingTokens(t, loyaltyJob("scratch totals", scratchTotals(false)), twice.Only("duplicate-enqueue"), twice.MaxDeliveries(1))
	require.Equal(t, []string{"duplicate-enqueue"}, tokens, rep.String())
	require.Contains(t, rep.String(), "attempt 1 of job-2 started on a session where attempt 1 of job-1 left temporary table scratch_totals")

	rep, tokens = findingTokens(t, loyaltyJob("scratch totals, dropped at commit", scratchTotals(true)))
	require.Empty(t, tokens, rep.String())
	for _, sr := range rep.Scenarios {
		for _, at := range sr.Attempts {
			require.Empty(t, at.SessionState, "%s: %s", sr.Scenario.Token(), at.Name())
		}
	}
}

// sessionKeeper adds 50 points (not idempotent). When leaves, it first
// leaves every kind of session state on its session (its PREPARE then
// fails on a redelivery there); otherwise it scopes each to its
// transaction.
func sessionKeeper(leaves bool) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		conn, err := a.Pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		stmts := []string{`SELECT pg_advisory_xact_lock(42)`, `SET LOCAL search_path = public`, `SET LOCAL work_mem = '8MB'`}
		if leaves {
			stmts = []string{`SELECT pg_advisory_lock(42)`, `SELECT pg_advisory_lock_shared(1, -2)`, `SET search_path = public`,
				`SET work_mem = '8MB'`, `LISTEN points_changed`, `PREPARE add_points AS SELECT 1`}
		}
		stmts = append(stmts, `UPDATE customers SET points = points + 50 WHERE id = 77`)
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		if leaves {
			return nil
		}
		_, err = conn.Exec(ctx, `UNLISTEN *`) // nothing to undo, but a job may tidy up
		return err
	}
}

func TestEveryKindOfSessionStateIsNamedAndNoneWhenNoneIsLeft(t *testing.T) {
	t.Parallel()
	opts := []twice.Option{twice.Only("sequential"), twice.MaxDeliveries(1)}
	rep, tokens := findingTokens(t, loyaltyJob("keeps session state", sessionKeeper(true)), opts...)
	require.Equal(t, []string{"sequential"}, tokens, rep.String())
	require.Contains(t, rep.String(), `prepared statement "add_points" already exists`) // one of them trips the redelivery
	require.Contains(t, rep.String(), "\n  attempt 2 of job-1 started on a session where attempt 1 of job-1 left "+
		"advisory lock (42), advisory lock (1, -2, shared), prepared statement add_points, LISTEN points_changed, SET search_path, SET work_mem: ")

	// The same broken promise, with nothing left on the session: no such line.
	rep, tokens = findingTokens(t, loyaltyJob("keeps no session state", sessionKeeper(false)), opts...)
	require.Equal(t, []string{"sequential"}, tokens, rep.String())
	require.False(t, strings.Contains(rep.String(), "started on a session where"), rep.String())
}

// What the application's AfterConnect sets up on a new session is the
// session's start, not something a delivery left.
func TestWhatAfterConnectSetsUpIsNotLeftByADelivery(t *testing.T) {
	t.Parallel()
	setUp := twice.ConfigurePool(func(cfg *pgxpool.Config) {
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.Exec(ctx, `SET work_mem = '8MB'; CREATE TEMP TABLE lookups (k text); LISTEN config_changed`)
			return err
		}
	})
	rep, tokens := findingTokens(t, loyaltyJob("increment, with a set-up session", incrementPoints), twice.Only("sequential"), setUp)
	require.Equal(t, []string{"sequential"}, tokens, rep.String())
	require.False(t, strings.Contains(rep.String(), "started on a session where"), rep.String())
	require.Empty(t, rep.Scenarios[0].Attempts[1].SessionState)
}

// A session of the attempt's *sql.DB is read as its pool's are.
func TestATempTableLeftThroughDatabaseSQLIsNamed(t *testing.T) {
	t.Parallel()
	job := loyaltyJob("scratch through database/sql", func(ctx context.Context, a *twice.Attempt) error {
		if _, err := a.DB.ExecContext(ctx, `CREATE TEMP TABLE scratch_totals (customer_id bigint, points int)`); err != nil {
			return err
		}
		_, err := a.DB.ExecContext(ctx, `UPDATE customers SET points = 50 WHERE id = 77`)
		return err
	})
	rep, tokens := findingTokens(t, job, twice.Only("sequential"), twice.MaxDeliveries(1))
	require.Equal(t, []string{"sequential"}, tokens, rep.String())
	require.Contains(t, rep.String(), "attempt 2 of job-1 started on a session where attempt 1 of job-1 left temporary table scratch_totals: ")
}

// With FreshSessionsPerDelivery, no redelivery finds what an earlier one
// left: the job that tripped on its temporary table passes.
func TestFreshSessionsPerDeliveryTellsTheStateWasTheCause(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, loyaltyJob("scratch totals", scratchTotals(false)), twice.Only("sequential"), twice.FreshSessionsPerDelivery())
	require.Empty(t, tokens, rep.String())
	require.Len(t, rep.Scenarios[0].Attempts, 2)
	require.Empty(t, rep.Scenarios[0].Attempts[1].SessionState)
}
