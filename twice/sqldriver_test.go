package twice_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq" // the "postgres" database/sql driver
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/twice"
)

// The loyalty jobs again, written against database/sql (a.DB) and checked on
// lib/pq through twice.SQLDriver("postgres"): the findings must be the ones
// the pgx versions get.

var libpq = twice.SQLDriver("postgres")

// "add 50 points" through lib/pq.
func incrementPointsSQL(ctx context.Context, a *twice.Attempt) error {
	_, err := a.DB.ExecContext(ctx, `UPDATE customers SET points = points + 50 WHERE id = $1`, 77)
	return err
}

const (
	insertLedgerSQL = `INSERT INTO points_ledger (customer_id, order_id, reason, points)
VALUES ($1, $2, 'order_reward', 50) ON CONFLICT (order_id, reason) DO NOTHING`
	addPointsSQL = `UPDATE customers SET points = points + 50 WHERE id = $1`
)

// The ledger row and the balance as two statements outside a transaction.
func ledgerTwoStatementsSQL(ctx context.Context, a *twice.Attempt) error {
	res, err := a.DB.ExecContext(ctx, insertLedgerSQL, 77, 9812)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	_, err = a.DB.ExecContext(ctx, addPointsSQL, 77)
	return err
}

// The same two statements in one transaction.
func ledgerInTransactionSQL(ctx context.Context, a *twice.Attempt) error {
	tx, err := a.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	res, err := tx.ExecContext(ctx, insertLedgerSQL, 77, 9812)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	if _, err := tx.ExecContext(ctx, addPointsSQL, 77); err != nil {
		return err
	}
	return tx.Commit()
}

// The ledger in one transaction, with a prepared statement and a query.
func ledgerPreparedSQL(ctx context.Context, a *twice.Attempt) error {
	tx, err := a.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var exists bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM points_ledger WHERE order_id = $1)`, 9812).Scan(&exists); err != nil || exists {
		return err
	}
	st, err := tx.PrepareContext(ctx, insertLedgerSQL)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	if _, err := st.ExecContext(ctx, 77, 9812); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, addPointsSQL, 77); err != nil {
		return err
	}
	return tx.Commit()
}

func backgroundContextSQL(_ context.Context, a *twice.Attempt) error {
	_, err := a.DB.ExecContext(context.Background(), `UPDATE customers SET points = 50 WHERE id = $1`, 77)
	return err
}

func TestSQLDriverIncrementIsFlaggedBySequential(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, loyaltyJob("increment points (lib/pq)", incrementPointsSQL), libpq)
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue", "concurrent:AB"}, tokens, rep.String())
	f := rep.Findings[0]
	require.Equal(t, "not idempotent: sequential: the ack was lost and the same job was delivered again", f.Headline)
	require.Len(t, f.Database, 1)
	require.Equal(t, "customers", f.Database[0].Table)
}

func TestSQLDriverCrashBetweenTwoStatementsIsALostUpdate(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, loyaltyJob("ledger, two statements (lib/pq)", ledgerTwoStatementsSQL), libpq)
	require.Equal(t, []string{"crash@2"}, tokens, rep.String())
	require.Contains(t, rep.Findings[0].Headline, "crash before point 2 of 2 (UPDATE customers SET points = points + 50 WHERE id = $1), then redelivery")

	rep, tokens = findingTokens(t, loyaltyJob("ledger, one transaction (lib/pq)", ledgerInTransactionSQL), libpq, twice.EveryCrashPoint())
	require.Empty(t, tokens, rep.String())
	// BEGIN, INSERT, UPDATE, COMMIT: four points, as with pgx.
	require.Equal(t, []string{"sequential", "crash@1", "crash@2", "crash@3", "crash@4", "crash@end", "duplicate-enqueue"}, withoutConcurrent(rep.Tokens()))
}

func TestSQLDriverPreparedStatementsAndQueriesArePoints(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, loyaltyJob("ledger, prepared (lib/pq)", ledgerPreparedSQL), libpq, twice.EveryCrashPoint())
	// One at a time it is idempotent; two deliveries at once both pass the
	// SELECT, and the loser's ON CONFLICT DO NOTHING inserts nothing but its
	// UPDATE still adds the points (the job ignores the insert's row count).
	require.Equal(t, []string{"overlap@2"}, tokens, rep.String())
	// BEGIN, SELECT, PREPARE, INSERT, UPDATE, COMMIT.
	require.Equal(t, []string{"sequential", "crash@1", "crash@2", "crash@3", "crash@4", "crash@5", "crash@6", "crash@end", "duplicate-enqueue"}, withoutConcurrent(rep.Tokens()))
}

// A statement on a.DB without the attempt's context is the attempt's (the
// worker runs one attempt at a time), through lib/pq as through pgx.
func TestSQLDriverContextFreeStatementIsTheAttempts(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, loyaltyJob("background ctx (lib/pq)", backgroundContextSQL), libpq)
	require.Empty(t, tokens, rep.String())
	require.Len(t, rep.Reference.Attempts[0].Points, 1)
	require.Equal(t, "UPDATE customers SET points = 50 WHERE id = $1", rep.Reference.Attempts[0].Points[0].Label)
}

func TestSQLDriverUnknownDriver(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), loyaltyJob("ledger", ledgerTwoStatementsSQL), twice.SQLDriver("no-such-driver"))
	require.Error(t, rep.Err)
	require.True(t, strings.HasPrefix(rep.Err.Error(), `twice: SQLDriver("no-such-driver"): sql: unknown driver "no-such-driver"`), rep.Err.Error())
}

// The handle a job gets is a plain *sql.DB.
var _ *sql.DB = (&twice.Attempt{}).DB

// A statement still running when the attempt is cut off: lib/pq cancels it
// when the attempt's context is cancelled, and its connection is closed as
// soon as the driver returns.
func hangsInStatementSQL(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.DB.ExecContext(ctx, `SELECT 1`); err != nil {
		return err
	}
	_, err := a.DB.ExecContext(ctx, `SELECT pg_sleep(30)`)
	return err
}

func TestSQLDriverHungStatementIsCutOff(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, loyaltyJob("hangs in a statement (lib/pq)", hangsInStatementSQL), libpq,
		twice.AttemptTimeout(2*time.Second))
	require.Equal(t, []string{"once"}, tokens)
	require.Contains(t, rep.Findings[0].Headline, "an attempt ran longer than AttemptTimeout")
	require.Equal(t, []string{"attempt 1 of job-1 was still running a statement in PostgreSQL after AttemptTimeout: point 2 (SELECT pg_sleep(30)); it is slow, not hung. " +
		"If the job takes this long in production, give it more time with twice.AttemptTimeout(d) (every scenario plays with that bound; twice.WallBudget bounds the whole check); " +
		"its connections were cut and its context cancelled"}, problems(rep.Findings[0]))
	t.Log(rep.String())
}
