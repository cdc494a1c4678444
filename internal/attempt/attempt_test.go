package attempt

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/inject"
)

type job struct{ m map[string]int }

func panics(_ context.Context, j *job) error {
	j.m["x"] = 1 // a nil map
	return nil
}

func goexits(context.Context, *job) error {
	runtime.Goexit()
	return nil
}

func returns(context.Context, *job) error { return errors.New("no") }

func start(t *testing.T, fn func(context.Context, *job) error) (*inject.Run, chan Exit) {
	t.Helper()
	ctx, run := inject.Start(context.Background(), "attempt 1 of job-1", inject.Plan{})
	t.Cleanup(run.Finish)
	done := make(chan Exit, 1)
	Go(run, "", done, fn, ctx, &job{})
	return run, done
}

// A panic's text is its value and the stack from the panic to the job's
// function, the goroutine Go made left out.
func TestAPanicsStackEndsAtTheJob(t *testing.T) {
	run, done := start(t, panics)
	w := Wait(run, done, time.Minute, time.Second, true, nil, func() { t.Fatal("hung") })
	require.True(t, strings.HasPrefix(w.Panic, "panic: assignment to entry in nil map\n"), w.Panic)
	require.True(t, strings.HasSuffix(w.Panic, "attempt.panics(...)\n        attempt_test.go:19"), w.Panic)
	require.NotContains(t, w.Panic, "attempt.Go")
	require.False(t, w.Hung || w.CrashedBeforeAck)
}

// runtime.Goexit is told by the job's line that called it.
func TestGoexitNamesTheJobsLine(t *testing.T) {
	run, done := start(t, goexits)
	w := Wait(run, done, time.Minute, time.Second, true, nil, func() { t.Fatal("hung") })
	require.Equal(t, "attempt_test.go:24", w.Goexit)
	require.False(t, w.CrashedBeforeAck)
}

// A lost ack crashes an attempt that returned, unless it snoozed.
func TestALostAckCrashesUnlessItSnoozed(t *testing.T) {
	run, done := start(t, returns)
	w := Wait(run, done, time.Minute, time.Second, true, nil, func() { t.Fatal("hung") })
	require.EqualError(t, w.Err, "no")
	require.True(t, w.CrashedBeforeAck)
	crashed, _, reason := run.Crashed()
	require.True(t, crashed)
	require.Equal(t, "crashed after the last point, before the ack", reason)

	run, done = start(t, returns)
	w = Wait(run, done, time.Minute, time.Second, true, func(error) bool { return true }, func() { t.Fatal("hung") })
	require.False(t, w.CrashedBeforeAck)
}

// An attempt still running at the timeout is hung: crashed, then given the
// grace period.
func TestAHungAttemptIsCrashed(t *testing.T) {
	run, done := start(t, func(ctx context.Context, _ *job) error {
		<-ctx.Done()
		return ctx.Err()
	})
	called := false
	w := Wait(run, done, 10*time.Millisecond, time.Minute, true, nil, func() { called = true })
	require.True(t, called)
	require.True(t, w.Hung)
	require.False(t, w.Leaked || w.CrashedBeforeAck)
	_, _, reason := run.Crashed()
	require.Equal(t, "hung for 10ms", reason)
}
