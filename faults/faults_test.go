package faults_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/DATA-DOG/go-sqlmock"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
)

func TestPointIsANoOpOutsideACheck(t *testing.T) {
	require.NoError(t, faults.Point(context.Background(), "before payout"))
}

func TestPointCrashesInsideAnAttempt(t *testing.T) {
	ctx, run := inject.Start(context.Background(), "a", inject.Plan{CrashBefore: 1})
	defer run.Finish()
	err := faults.Point(ctx, "before payout")
	require.ErrorIs(t, err, faults.ErrCrashed)
	require.ErrorIs(t, err, inject.ErrCrashed, "the public errors are the engine's")
	_, at, _ := run.Crashed()
	require.Equal(t, faults.Step{Index: 1, Kind: faults.Explicit, Label: "point before payout"}, at)
	require.Equal(t, "point", at.Kind.String())
}

// A handle the job opens itself, through the public wrapper: its statements
// are points, a crash refuses them, and a foreign context is refused.
func TestWrapConnectorThroughThePublicAPI(t *testing.T) {
	own, mock, err := sqlmock.NewWithDSN("faults_public_1", sqlmock.QueryMatcherOption(sqlmock.QueryMatcherEqual))
	require.NoError(t, err)
	defer func() { _ = own.Close() }()
	inner, err := faults.OpenConnector("sqlmock", "faults_public_1")
	require.NoError(t, err)
	db := sql.OpenDB(faults.WrapConnector(inner))
	defer func() { _ = db.Close() }()

	_, err = db.ExecContext(context.Background(), "DELETE FROM outbox")
	require.ErrorIs(t, err, faults.ErrForeignContext)

	mock.ExpectExec("UPDATE customers SET points = 1").WillReturnResult(sqlmock.NewResult(0, 1))
	ctx, run := inject.Start(context.Background(), "a", inject.Plan{CrashBefore: 2})
	defer run.Finish()
	_, err = db.ExecContext(ctx, "UPDATE customers SET points = 1")
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "INSERT INTO outbox VALUES (1)")
	require.True(t, errors.Is(err, faults.ErrCrashed), "got %v", err)
	require.Equal(t, []faults.Step{{Index: 1, Kind: faults.SQL, Label: "UPDATE customers SET points = 1"}}, run.Steps())
	require.NoError(t, mock.ExpectationsWereMet())
}
