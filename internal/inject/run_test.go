package inject_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/inject"
)

func TestPointIsANoOpOutsideACheck(t *testing.T) {
	require.NoError(t, inject.Point(context.Background(), "before payout"))
}

func TestCrashBeforeTheNthPoint(t *testing.T) {
	ctx, run := inject.Start(context.Background(), "attempt 1 of job-1", inject.Plan{CrashBefore: 2})
	cut := 0
	run.OnCrash(func() { cut++ })

	require.NoError(t, inject.Point(ctx, "one"))
	err := inject.Point(ctx, "two")
	require.ErrorIs(t, err, inject.ErrCrashed)
	require.EqualError(t, err, "attempt 1 of job-1: twice: the attempt was crashed here by the check (fail-stop); nothing after this point reaches the world")
	require.ErrorIs(t, inject.Point(ctx, "three"), inject.ErrCrashed, "later points are refused")
	require.Equal(t, 1, cut, "the connections are cut once")
	require.ErrorIs(t, context.Cause(ctx), inject.ErrCrashed, "the attempt's context is cancelled")

	require.Equal(t, []inject.Step{{Index: 1, Kind: inject.Explicit, Label: "point one"}}, run.Steps())
	crashed, at, reason := run.Crashed()
	require.True(t, crashed)
	require.Equal(t, inject.Step{Index: 2, Kind: inject.Explicit, Label: "point two"}, at)
	require.Equal(t, "crash before point 2", reason)
}

func TestOnCrashAfterTheCrashRunsAtOnce(t *testing.T) {
	_, run := inject.Start(context.Background(), "a", inject.Plan{})
	run.Crash("hung")
	ran := false
	run.OnCrash(func() { ran = true })
	require.True(t, ran)
}

func TestWaitErrorCrashesBetweenPoints(t *testing.T) {
	stop := errors.New("scheduler: stuck")
	ctx, run := inject.Start(context.Background(), "a", inject.Plan{Wait: func(context.Context, inject.Step) error { return stop }})
	require.ErrorIs(t, inject.Point(ctx, "x"), inject.ErrCrashed)
	crashed, at, reason := run.Crashed()
	require.True(t, crashed)
	require.Zero(t, at.Index)
	require.Equal(t, "scheduler: stuck", reason)
}

func TestFinishedAttemptRefusesLaterPoints(t *testing.T) {
	ctx, run := inject.Start(context.Background(), "a", inject.Plan{})
	run.Finish()
	require.ErrorIs(t, inject.Point(ctx, "late"), inject.ErrFinished)
	require.Empty(t, run.Steps())
}

func TestLabelFoldsAndShortens(t *testing.T) {
	require.Equal(t, "UPDATE customers SET points = points + 50 WHERE id = $1",
		inject.Label("UPDATE customers\n\tSET points = points + 50\n  WHERE id = $1"))
	long := inject.Label("SELECT " + strings.Repeat("a", 30) + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	require.Len(t, []rune(long), 96)
	require.True(t, long[len(long)-3:] == "…")
	require.Equal(t, "-- name: JobInsertFastMany :many",
		inject.Label("-- name: JobInsertFastMany :many\nWITH raw_job_data AS (\n  SELECT unnest($1::bigint[]) AS id"))
}

func TestAppliedCrashesOrLosesTheReply(t *testing.T) {
	ctx, run := inject.Start(context.Background(), "a", inject.Plan{LoseReply: 1, CrashAfter: 2})
	_, err := run.Enter(ctx, inject.Effect, "payment")
	require.NoError(t, err)
	require.ErrorIs(t, run.Applied(ctx), inject.ErrReplyLost)
	_, err = run.Enter(ctx, inject.Effect, "email")
	require.NoError(t, err)
	require.ErrorIs(t, run.Applied(ctx), inject.ErrCrashed)
	crashed, at, reason := run.Crashed()
	require.True(t, crashed)
	require.Zero(t, at.Index)
	require.Equal(t, "crash after point 2 was applied", reason)
	require.Len(t, run.Steps(), 2, "both effects were applied")
}

// TestReturnEndsTheContextAndAckLetsOutlivingCallsOn: once Run returned,
// a call on the attempt's context is refused and recorded with where its
// goroutine was started; a call on a context that outlives the attempt
// waits for the ack, then is a point after it; a crash before the ack
// refuses it instead.
func TestReturnEndsTheContextAndAckLetsOutlivingCallsOn(t *testing.T) {
	ctx, run := inject.Start(context.Background(), "a", inject.Plan{})
	require.NoError(t, inject.Point(ctx, "in run"))
	run.Return()
	require.Error(t, ctx.Err(), "the attempt's context ends with Run")
	done := make(chan error, 1)
	go func() { done <- inject.Point(ctx, "late") }()
	require.ErrorIs(t, <-done, inject.ErrFinished)
	require.Equal(t, []string{"point late"}, run.Late())
	require.Len(t, run.LateSites(), 1)
	require.Contains(t, run.LateSites()[0], "inject_test.TestReturnEndsTheContextAndAckLetsOutlivingCallsOn at internal/inject/run_test.go:")

	go func() { done <- inject.Point(context.WithoutCancel(ctx), "after ack") }()
	select {
	case err := <-done:
		t.Fatalf("the call went on before the ack: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	run.Ack()
	require.NoError(t, <-done)
	steps := run.Steps()
	require.Len(t, steps, 2)
	require.True(t, steps[1].AfterAck)
	run.Finish()

	ctx, run = inject.Start(context.Background(), "b", inject.Plan{})
	run.Return()
	go func() { done <- inject.Point(context.WithoutCancel(ctx), "after ack") }()
	time.Sleep(5 * time.Millisecond)
	run.Crash("crashed before the ack")
	run.Ack()
	require.ErrorIs(t, <-done, inject.ErrCrashed)
	require.False(t, run.CrashedAfterAck())
	run.Finish()
}
