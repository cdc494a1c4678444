package inject_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/pgfixture"
)

// A call on a worker's handles without an attempt's context is the attempt
// running there; between attempts it is foreign, unless it changes nothing
// (a ROLLBACK).
func TestAContextFreeCallBelongsToTheAttemptOnTheWorker(t *testing.T) {
	db := pgfixture.New(t, pgfixture.SQL(`CREATE TABLE t (n int)`))
	w, err := inject.NewWorker(db.ConnConfig())
	require.NoError(t, err)
	defer w.Close()
	bg := context.Background()

	ctx, run := inject.Start(bg, "attempt 1 of job-1", inject.Plan{})
	w.Owner.Begin(run)
	tx, err := w.Pool.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(bg, `INSERT INTO t VALUES (1)`) // no context: the attempt's
	require.NoError(t, err)
	sqlTx, err := w.DB.Begin() //nolint:noctx
	require.NoError(t, err)
	_, err = sqlTx.Exec(`INSERT INTO t VALUES (2)`) //nolint:noctx
	require.NoError(t, err)
	var labels []string
	for _, s := range run.Steps() {
		labels = append(labels, s.Label)
	}
	run.Finish()
	w.Owner.End(run)
	if !assert.Equal(t, []string{"begin", "INSERT INTO t VALUES (1)", "begin", "INSERT INTO t VALUES (2)"}, labels) {
		_ = tx.Rollback(bg)
		_ = sqlTx.Rollback()
		return
	}

	// After the attempt: a rollback changes nothing and goes through ...
	require.NoError(t, tx.Rollback(bg))
	require.NoError(t, sqlTx.Rollback())
	require.Empty(t, w.TakeForeign())
	// ... anything else is refused and reported.
	_, err = w.Pool.Exec(bg, `INSERT INTO t VALUES (3)`)
	require.True(t, errors.Is(err, inject.ErrForeignContext), "%v", err)
	_, err = w.DB.Exec(`INSERT INTO t VALUES (4)`) //nolint:noctx
	require.Error(t, err)
	// (database/sql retries the refused statement on new connections: each
	// refusal is recorded.)
	foreign := w.TakeForeign()
	require.Equal(t, "INSERT INTO t VALUES (3)", foreign[0])
	require.Subset(t, []string{"INSERT INTO t VALUES (3)", "INSERT INTO t VALUES (4)"}, foreign)
	var n int
	require.NoError(t, db.Pool().QueryRow(bg, `SELECT count(*) FROM t`).Scan(&n))
	require.Zero(t, n)
}
