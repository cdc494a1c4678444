package inject_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/DATA-DOG/go-sqlmock"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/twicekit/twicekit/internal/inject"
)

// mockDB is a *sql.DB on go-sqlmock through the fault-injecting wrapper, as
// a worker would have it.
type mockDB struct {
	*sql.DB
	mock sqlmock.Sqlmock
	dc   *inject.DriverConns

	mu      sync.Mutex
	foreign []string
}

var mockSeq atomic.Int64

func newMockDB(t *testing.T) *mockDB {
	t.Helper()
	opts := goleak.IgnoreCurrent()
	dsn := fmt.Sprintf("faults_driver_%d", mockSeq.Add(1))
	// The mock's own *sql.DB keeps one connection open for the whole test,
	// so sqlmock keeps the DSN while the wrapper opens and cuts its own.
	own, mock, err := sqlmock.NewWithDSN(dsn, sqlmock.QueryMatcherOption(sqlmock.QueryMatcherEqual))
	require.NoError(t, err)
	inner, err := inject.OpenConnector("sqlmock", dsn)
	require.NoError(t, err)
	m := &mockDB{mock: mock, dc: inject.NewDriverConns()}
	m.DB = sql.OpenDB(inject.WrapConnector(inner, m.dc, func(label string) {
		m.mu.Lock()
		m.foreign = append(m.foreign, label)
		m.mu.Unlock()
	}))
	t.Cleanup(func() {
		_ = m.Close() // sqlmock says "Close was not expected" for the live connections; the tests assert the cuts
		_ = own.Close()
		goleak.VerifyNone(t, opts)
	})
	return m
}

func (m *mockDB) foreignCalls() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.foreign...)
}

// start begins an attempt whose crash cuts the wrapper's connections, as the
// worker wires it.
func (m *mockDB) start(plan inject.Plan) (context.Context, *inject.Run) {
	ctx, run := inject.Start(context.Background(), "attempt 1 of job-1", plan)
	run.OnCrash(m.dc.CutAll)
	return ctx, run
}

func labels(steps []inject.Step) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.Label
	}
	return out
}

// transfer is a job of five points: an Exec outside a transaction, then
// BEGIN, two Execs and COMMIT. After its first error it keeps sending its
// remaining calls (with the attempt's values but without its cancellation,
// so database/sql does not stop them first): they must all be refused by
// the wrapper and reach nothing.
func transfer(ctx context.Context, db *sql.DB) (first error, later []error) {
	note := func(err error) {
		if err == nil {
			return
		}
		if first == nil {
			first = err
			ctx = context.WithoutCancel(ctx)
			return
		}
		later = append(later, err)
	}
	_, err := db.ExecContext(ctx, "INSERT INTO ledger (id) VALUES (1)")
	note(err)
	tx, err := db.BeginTx(ctx, nil)
	note(err)
	if tx == nil {
		tx, err = db.BeginTx(ctx, nil)
		note(err)
	}
	if tx != nil {
		_, err = tx.ExecContext(ctx, "UPDATE accounts SET balance = balance - 5 WHERE id = 1")
		note(err)
		_, err = tx.ExecContext(ctx, "UPDATE accounts SET balance = balance + 5 WHERE id = 2")
		note(err)
		note(tx.Commit())
	}
	_, err = db.ExecContext(ctx, "INSERT INTO audit (id) VALUES (1)")
	note(err)
	return first, later
}

var transferPoints = []string{
	"INSERT INTO ledger (id) VALUES (1)",
	"BEGIN",
	"UPDATE accounts SET balance = balance - 5 WHERE id = 1",
	"UPDATE accounts SET balance = balance + 5 WHERE id = 2",
	"COMMIT",
	"INSERT INTO audit (id) VALUES (1)",
}

// expectTransfer expects the first n points of transfer at the driver.
func expectTransfer(mock sqlmock.Sqlmock, n int) {
	for i := range n {
		switch transferPoints[i] {
		case "BEGIN":
			mock.ExpectBegin()
		case "COMMIT":
			mock.ExpectCommit()
		default:
			mock.ExpectExec(transferPoints[i]).WillReturnResult(sqlmock.NewResult(0, 1))
		}
	}
}

func TestDriverCleanRunSeesEveryStatementAsAPoint(t *testing.T) {
	m := newMockDB(t)
	expectTransfer(m.mock, len(transferPoints))
	ctx, run := m.start(inject.Plan{})
	first, later := transfer(ctx, m.DB)
	require.NoError(t, first)
	require.Empty(t, later)
	require.Equal(t, transferPoints, labels(run.Steps()), "COMMIT and BEGIN are points")
	for _, s := range run.Steps() {
		require.Equal(t, inject.SQL, s.Kind)
	}
	require.NoError(t, m.mock.ExpectationsWereMet())
	require.Empty(t, m.foreignCalls())
}

func TestDriverCrashBeforeStatementK(t *testing.T) {
	for k := 1; k <= len(transferPoints); k++ {
		t.Run(fmt.Sprintf("crash@%d", k), func(t *testing.T) {
			m := newMockDB(t)
			expectTransfer(m.mock, k-1)
			// The crash closes the driver connection (the server aborts the
			// open transaction) before anything else reaches the driver.
			m.mock.ExpectClose()
			ctx, run := m.start(inject.Plan{CrashBefore: k})

			first, later := transfer(ctx, m.DB)

			require.ErrorIs(t, first, inject.ErrCrashed)
			require.NotErrorIs(t, first, driver.ErrBadConn)
			for _, err := range later {
				// Refused by the wrapper (or by database/sql for a transaction it
				// already rolled back), never by the mock: nothing reached it.
				require.NotContains(t, err.Error(), "was not expected")
				require.NotErrorIs(t, err, driver.ErrBadConn)
			}
			require.Equal(t, transferPoints[:k-1], labels(run.Steps()))
			crashed, at, _ := run.Crashed()
			require.True(t, crashed)
			require.Equal(t, inject.Step{Index: k, Kind: inject.SQL, Label: transferPoints[k-1]}, at)
			require.NoError(t, m.mock.ExpectationsWereMet())
			require.Zero(t, m.dc.Open(), "every connection of the attempt is closed")
		})
	}
}

func TestDriverCommitIsAPointAndACrashThereAbortsTheTransaction(t *testing.T) {
	m := newMockDB(t)
	m.mock.ExpectBegin()
	m.mock.ExpectExec("UPDATE accounts SET balance = 0").WillReturnResult(sqlmock.NewResult(0, 1))
	m.mock.ExpectClose() // no ExpectCommit: COMMIT never reaches the driver
	ctx, run := m.start(inject.Plan{CrashBefore: 3})

	tx, err := m.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, "UPDATE accounts SET balance = 0")
	require.NoError(t, err)
	err = tx.Commit()
	require.ErrorIs(t, err, inject.ErrCrashed)
	require.NotErrorIs(t, err, driver.ErrBadConn)
	_, at, _ := run.Crashed()
	require.Equal(t, "COMMIT", at.Label)
	require.Equal(t, []string{"BEGIN", "UPDATE accounts SET balance = 0"}, labels(run.Steps()))
	require.NoError(t, m.mock.ExpectationsWereMet())
	require.Zero(t, m.dc.Open())
}

func TestDriverBadConnRetryNeverRerunsACrashedStatement(t *testing.T) {
	t.Run("a cut pooled connection is refused, not retried elsewhere", func(t *testing.T) {
		m := newMockDB(t)
		m.mock.ExpectExec("SELECT 1").WillReturnResult(sqlmock.NewResult(0, 0))
		m.mock.ExpectClose()
		ctx, run := m.start(inject.Plan{})
		_, err := m.ExecContext(ctx, "SELECT 1")
		require.NoError(t, err)
		run.Crash("hung") // between points: the idle pooled connection is cut

		// database/sql takes the cut connection from its pool; ResetSession says
		// ErrBadConn, database/sql retries on a new connection, and the wrapper
		// refuses the crashed attempt there without reaching the driver.
		_, err = m.ExecContext(context.WithoutCancel(ctx), "UPDATE accounts SET balance = 0")
		require.ErrorIs(t, err, inject.ErrCrashed)
		require.NotErrorIs(t, err, driver.ErrBadConn)
		require.Equal(t, []string{"SELECT 1"}, labels(run.Steps()))
		require.NoError(t, m.mock.ExpectationsWereMet())
	})
	t.Run("the driver says ErrBadConn while the attempt crashes", func(t *testing.T) {
		m := newMockDB(t)
		// Only one expectation: a retry by database/sql would reach the mock
		// and fail as "not expected".
		m.mock.ExpectExec("UPDATE accounts SET balance = 0").
			WillDelayFor(100 * time.Millisecond).WillReturnError(driver.ErrBadConn)
		m.mock.ExpectClose()
		ctx, run := m.start(inject.Plan{})
		go func() {
			time.Sleep(20 * time.Millisecond)
			run.Crash("hung")
		}()
		// Without cancellation, so the mock answers ErrBadConn after the crash.
		_, err := m.ExecContext(context.WithoutCancel(ctx), "UPDATE accounts SET balance = 0")
		require.ErrorIs(t, err, inject.ErrCrashed)
		require.NotErrorIs(t, err, driver.ErrBadConn)
		require.Equal(t, []string{"UPDATE accounts SET balance = 0"}, labels(run.Steps()), "one point")
		require.NoError(t, m.mock.ExpectationsWereMet())
		require.Zero(t, m.dc.Open())
	})
	t.Run("a live attempt's retry is one point and runs once", func(t *testing.T) {
		m := newMockDB(t)
		m.mock.ExpectExec("UPDATE accounts SET balance = 0").WillReturnError(driver.ErrBadConn)
		m.mock.ExpectExec("UPDATE accounts SET balance = 0").WillReturnResult(sqlmock.NewResult(0, 1))
		ctx, run := m.start(inject.Plan{})
		res, err := m.ExecContext(ctx, "UPDATE accounts SET balance = 0")
		require.NoError(t, err)
		n, err := res.RowsAffected()
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		require.Equal(t, []string{"UPDATE accounts SET balance = 0"}, labels(run.Steps()), "the retry is not a second point")
		require.NoError(t, m.mock.ExpectationsWereMet())
	})
	t.Run("the next attempt silently gets a live connection", func(t *testing.T) {
		m := newMockDB(t)
		m.mock.ExpectExec("SELECT 1").WillReturnResult(sqlmock.NewResult(0, 0))
		m.mock.ExpectClose()
		m.mock.ExpectExec("SELECT 1").WillReturnResult(sqlmock.NewResult(0, 0))
		ctx, run := m.start(inject.Plan{CrashBefore: 2})
		_, err := m.ExecContext(ctx, "SELECT 1")
		require.NoError(t, err)
		_, err = m.ExecContext(ctx, "SELECT 2")
		require.ErrorIs(t, err, inject.ErrCrashed)
		run.Finish()
		require.Equal(t, 1, m.dc.Opens())

		// The redelivery: database/sql discards the cut connection (ResetSession
		// or IsValid) and opens another; the statement runs once.
		ctx2, run2 := m.start(inject.Plan{})
		_, err = m.ExecContext(ctx2, "SELECT 1")
		require.NoError(t, err)
		require.Equal(t, []string{"SELECT 1"}, labels(run2.Steps()))
		require.Equal(t, 2, m.dc.Opens())
		require.NoError(t, m.mock.ExpectationsWereMet())
	})
}

func TestDriverForeignContextIsRefusedAndReported(t *testing.T) {
	m := newMockDB(t)
	m.mock.ExpectBegin()
	m.mock.ExpectRollback()
	ctx, run := m.start(inject.Plan{})

	_, err := m.ExecContext(context.Background(), "UPDATE customers SET points = 50 WHERE id = $1", 77)
	require.ErrorIs(t, err, inject.ErrForeignContext)
	require.NotErrorIs(t, err, driver.ErrBadConn)

	tx, err := m.BeginTx(ctx, nil)
	require.NoError(t, err)
	rows, err := tx.QueryContext(context.TODO(), "SELECT points FROM customers")
	require.ErrorIs(t, err, inject.ErrForeignContext)
	require.Nil(t, rows)
	require.NoError(t, tx.Rollback())

	require.Equal(t, []string{
		"UPDATE customers SET points = 50 WHERE id = $1",
		"SELECT points FROM customers",
	}, m.foreignCalls(), "each reported once")
	require.Equal(t, []string{"BEGIN", "ROLLBACK"}, labels(run.Steps()))
	require.NoError(t, m.mock.ExpectationsWereMet())
}

func TestDriverPreparedStatementExecutionsArePoints(t *testing.T) {
	m := newMockDB(t)
	prep := m.mock.ExpectPrepare("UPDATE customers SET points = points + $1 WHERE id = $2")
	prep.ExpectExec().WithArgs(50, 77).WillReturnResult(sqlmock.NewResult(0, 1))
	m.mock.ExpectClose()
	ctx, run := m.start(inject.Plan{CrashBefore: 3})

	st, err := m.PrepareContext(ctx, "UPDATE customers SET points = points + $1 WHERE id = $2")
	require.NoError(t, err)
	_, err = st.ExecContext(ctx, 50, 77)
	require.NoError(t, err)
	_, err = st.ExecContext(context.WithoutCancel(ctx), 50, 78)
	require.ErrorIs(t, err, inject.ErrCrashed)
	require.NotErrorIs(t, err, driver.ErrBadConn)
	require.NoError(t, st.Close())

	require.Equal(t, []string{
		"PREPARE UPDATE customers SET points = points + $1 WHERE id = $2",
		"UPDATE customers SET points = points + $1 WHERE id = $2",
	}, labels(run.Steps()))
	require.NoError(t, m.mock.ExpectationsWereMet())
}

func TestDriverQueryRowsAndPing(t *testing.T) {
	m := newMockDB(t)
	m.mock.ExpectQuery("SELECT points FROM customers WHERE id = $1").WithArgs(77).
		WillReturnRows(sqlmock.NewRows([]string{"points"}).AddRow(50))
	ctx, run := m.start(inject.Plan{})

	require.NoError(t, m.PingContext(ctx), "a ping is not a point")
	var points int
	require.NoError(t, m.QueryRowContext(ctx, "SELECT points FROM customers WHERE id = $1", 77).Scan(&points))
	require.Equal(t, 50, points)
	require.Equal(t, []string{"SELECT points FROM customers WHERE id = $1"}, labels(run.Steps()))
	require.NoError(t, m.mock.ExpectationsWereMet())
}

func TestDriverTransactionLeftOpenIsAbortedWhenTheAttemptReturns(t *testing.T) {
	m := newMockDB(t)
	m.mock.ExpectBegin()
	m.mock.ExpectExec("UPDATE accounts SET balance = 0").WillReturnResult(sqlmock.NewResult(0, 1))
	m.mock.ExpectClose() // no ExpectRollback: the cleanup is refused, the connection closed
	ctx, run := m.start(inject.Plan{})

	tx, err := m.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, "UPDATE accounts SET balance = 0")
	require.NoError(t, err)
	run.Finish() // the job returned with the transaction open

	require.Eventually(t, func() bool { return m.dc.Open() == 0 }, 2*time.Second, time.Millisecond)
	require.ErrorIs(t, tx.Commit(), sql.ErrTxDone)
	require.Equal(t, []string{"BEGIN", "UPDATE accounts SET balance = 0"}, labels(run.Steps()))
	require.NoError(t, m.mock.ExpectationsWereMet())
}

func TestOpenConnectorUnknownDriver(t *testing.T) {
	_, err := inject.OpenConnector("no-such-driver", "")
	require.Error(t, err)
	require.Regexp(t, regexp.MustCompile(`unknown driver "no-such-driver"`), err.Error())
}

func TestDriverWorkerUseDriver(t *testing.T) {
	cfg, err := pgx.ParseConfig("postgres://twice@127.0.0.1:1/none?sslmode=disable")
	require.NoError(t, err)
	w, err := inject.NewWorker(cfg) // connects lazily: nothing is dialed here
	require.NoError(t, err)
	defer w.Close()
	dsn := fmt.Sprintf("faults_driver_%d", mockSeq.Add(1))
	own, mock, err := sqlmock.NewWithDSN(dsn)
	require.NoError(t, err)
	defer func() { _ = own.Close() }()
	require.NoError(t, w.UseDriver("sqlmock", dsn))
	mock.ExpectExec("SELECT 1").WillReturnResult(sqlmock.NewResult(0, 0))
	mock.ExpectClose()

	ctx, run := inject.Start(context.Background(), "a", inject.Plan{CrashBefore: 2})
	run.OnCrash(w.Cut)
	_, err = w.DB.ExecContext(ctx, "SELECT 1")
	require.NoError(t, err)
	_, err = w.DB.ExecContext(ctx, "SELECT 2")
	require.ErrorIs(t, err, inject.ErrCrashed)
	_, err = w.DB.ExecContext(context.Background(), "SELECT 3")
	require.True(t, errors.Is(err, inject.ErrForeignContext))
	require.Equal(t, []string{"SELECT 3"}, w.TakeForeign())
	require.NoError(t, mock.ExpectationsWereMet())
}
