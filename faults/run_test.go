package faults_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/faults"
)

func TestPointIsANoOpOutsideACheck(t *testing.T) {
	require.NoError(t, faults.Point(context.Background(), "before payout"))
}

func TestCrashBeforeTheNthPoint(t *testing.T) {
	ctx, run := faults.Start(context.Background(), "attempt 1 of job-1", faults.Plan{CrashBefore: 2})
	cut := 0
	run.OnCrash(func() { cut++ })

	require.NoError(t, faults.Point(ctx, "one"))
	err := faults.Point(ctx, "two")
	require.ErrorIs(t, err, faults.ErrCrashed)
	require.EqualError(t, err, "attempt 1 of job-1: twice: the attempt was crashed here by the check (fail-stop); nothing after this point reaches the world")
	require.ErrorIs(t, faults.Point(ctx, "three"), faults.ErrCrashed, "later points are refused")
	require.Equal(t, 1, cut, "the connections are cut once")
	require.ErrorIs(t, context.Cause(ctx), faults.ErrCrashed, "the attempt's context is cancelled")

	require.Equal(t, []faults.Step{{Index: 1, Kind: faults.Explicit, Label: "point one"}}, run.Steps())
	crashed, at, reason := run.Crashed()
	require.True(t, crashed)
	require.Equal(t, faults.Step{Index: 2, Kind: faults.Explicit, Label: "point two"}, at)
	require.Equal(t, "crash before point 2", reason)
}

func TestOnCrashAfterTheCrashRunsAtOnce(t *testing.T) {
	_, run := faults.Start(context.Background(), "a", faults.Plan{})
	run.Crash("hung")
	ran := false
	run.OnCrash(func() { ran = true })
	require.True(t, ran)
}

func TestWaitErrorCrashesBetweenPoints(t *testing.T) {
	stop := errors.New("scheduler: stuck")
	ctx, run := faults.Start(context.Background(), "a", faults.Plan{Wait: func(context.Context, faults.Step) error { return stop }})
	require.ErrorIs(t, faults.Point(ctx, "x"), faults.ErrCrashed)
	crashed, at, reason := run.Crashed()
	require.True(t, crashed)
	require.Zero(t, at.Index)
	require.Equal(t, "scheduler: stuck", reason)
}

func TestFinishedAttemptRefusesLaterPoints(t *testing.T) {
	ctx, run := faults.Start(context.Background(), "a", faults.Plan{})
	run.Finish()
	require.ErrorIs(t, faults.Point(ctx, "late"), faults.ErrFinished)
	require.Empty(t, run.Steps())
}

func TestLabelFoldsAndShortens(t *testing.T) {
	require.Equal(t, "UPDATE customers SET points = points + 50 WHERE id = $1",
		faults.Label("UPDATE customers\n\tSET points = points + 50\n  WHERE id = $1"))
	long := faults.Label("SELECT " + strings.Repeat("a", 30) + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	require.Len(t, []rune(long), 96)
	require.True(t, long[len(long)-3:] == "…")
	require.Equal(t, "-- name: JobInsertFastMany :many",
		faults.Label("-- name: JobInsertFastMany :many\nWITH raw_job_data AS (\n  SELECT unnest($1::bigint[]) AS id"))
}

func TestAppliedCrashesOrLosesTheReply(t *testing.T) {
	ctx, run := faults.Start(context.Background(), "a", faults.Plan{LoseReply: 1, CrashAfter: 2})
	_, err := run.Enter(ctx, faults.Effect, "payment")
	require.NoError(t, err)
	require.ErrorIs(t, run.Applied(ctx), faults.ErrReplyLost)
	_, err = run.Enter(ctx, faults.Effect, "email")
	require.NoError(t, err)
	require.ErrorIs(t, run.Applied(ctx), faults.ErrCrashed)
	crashed, at, reason := run.Crashed()
	require.True(t, crashed)
	require.Zero(t, at.Index)
	require.Equal(t, "crash after point 2 was applied", reason)
	require.Len(t, run.Steps(), 2, "both effects were applied")
}
