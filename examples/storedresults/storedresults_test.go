package storedresults_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/storedresults"
)

func TestAmount(t *testing.T) {
	promised := time.Date(2026, 10, 12, 7, 0, 0, 0, time.UTC)
	require.Equal(t, int64(0), storedresults.Amount(promised, promised))
	require.Equal(t, int64(5000), storedresults.Amount(promised, promised.Add(time.Minute)))
	require.Equal(t, int64(10000), storedresults.Amount(promised, promised.Add(2*time.Hour)))
	require.Equal(t, int64(15000), storedresults.Amount(promised, promised.Add(2*time.Hour+time.Second)))
}

// Without a late redrive every retry runs at the same time on the check's
// clock, computes the same amount, and the provider replays the first
// payout. Redriven an hour later it pays a different amount: the example
// (ExampleComputedJob) shows that finding, and ExampleStoredFirstJob the
// fixed twin passing.
func TestComputedAtRunTimeChangesOnALateRetry(t *testing.T) {
	t.Parallel()
	rep := check(t, storedresults.ComputedJob())
	require.Empty(t, story.Sequential(rep), rep.String())
}
