package twice_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/twice"
)

func callerEndedText(cause string) string {
	return "twice: the caller's context ended: " + cause + "; the check stopped there and proves nothing about the job: " +
		"give twice.Check a context that outlives the check (a deadline long enough for every scenario)"
}

// A caller's context that ends is named as that, wherever in the check it
// ends: before the check finds its server, during the reference run, during
// the scenarios; cancelled or past its deadline (issue 43).
func TestTheCallersContextEndingIsNamed(t *testing.T) {
	t.Parallel()
	t.Run("cancelled before", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rep := twice.Check(ctx, loyaltyJob("ledger", ledgerCTE))
		require.EqualError(t, rep.Err, callerEndedText("context canceled"))
		require.ErrorIs(t, rep.Err, context.Canceled)
	})
	t.Run("past its deadline before", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		rep := twice.Check(ctx, loyaltyJob("ledger", ledgerCTE))
		require.EqualError(t, rep.Err, callerEndedText("context deadline exceeded"))
	})
	// The job cancels the caller's context on its nth delivery: 1 is the
	// reference run, the others scenarios.
	for _, n := range []int32{1, 2, 5} {
		t.Run("cancelled during delivery "+string('0'+rune(n)), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var calls atomic.Int32
			rep := twice.Check(ctx, loyaltyJob("ledger", func(ctx context.Context, a *twice.Attempt) error {
				if calls.Add(1) == n {
					cancel()
				}
				return ledgerCTE(ctx, a)
			}))
			require.EqualError(t, rep.Err, callerEndedText("context canceled"))
			require.Empty(t, rep.Findings)
			require.Empty(t, rep.KeptDatabase)
		})
	}
	t.Run("its deadline passing during a delivery", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		var calls atomic.Int32
		rep := twice.Check(ctx, loyaltyJob("ledger", func(ctx context.Context, a *twice.Attempt) error {
			if calls.Add(1) == 3 {
				cancel(context.DeadlineExceeded) // as a deadline would, without a race with the check's speed
			}
			return ledgerCTE(ctx, a)
		}))
		require.EqualError(t, rep.Err, callerEndedText("context deadline exceeded"))
		require.True(t, errors.Is(rep.Err, context.DeadlineExceeded))
	})
}
