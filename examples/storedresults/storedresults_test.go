package storedresults_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/storedresults"
	"github.com/twicekit/twicekit/twice"
)

func TestAmount(t *testing.T) {
	promised := time.Date(2026, 10, 12, 7, 0, 0, 0, time.UTC)
	require.Equal(t, int64(0), storedresults.Amount(promised, promised))
	require.Equal(t, int64(5000), storedresults.Amount(promised, promised.Add(time.Minute)))
	require.Equal(t, int64(10000), storedresults.Amount(promised, promised.Add(2*time.Hour)))
	require.Equal(t, int64(15000), storedresults.Amount(promised, promised.Add(2*time.Hour+time.Second)))
}

func TestComputedAtRunTimeChangesOnALateRetry(t *testing.T) {
	t.Parallel()
	// Without a late redrive every retry runs at the same time on the
	// check's clock, computes the same amount, and the provider replays the
	// first payout.
	rep := check(t, storedresults.ComputedJob())
	require.Empty(t, story.Sequential(rep), rep.String())

	rep = check(t, storedresults.ComputedJob(), twice.LateRedrive(time.Hour))
	require.Equal(t, []string{"redrive-1h@2"}, story.Sequential(rep), rep.String())
	f := story.Find(rep, "redrive-1h@2")
	require.Contains(t, f.Hints, "the retry computed a different request (amount 10000 → 15000): store what you computed before acting on it")
	require.Contains(t, f.Problems, twice.Problem{Kind: twice.ProblemGaveUp, Attempt: "job-1", Text: "job-1 never succeeded: the queue gave up after 5 deliveries; the last time it returned: compensation for order 9812: the provider answered 422 Unprocessable Entity"})
	require.Equal(t, []string{"compensations"}, story.Tables(f))
	require.Empty(t, f.Effects, "the provider paid once: it refused the second amount")
}

func TestStoredFirstPaysTheSameAmount(t *testing.T) {
	t.Parallel()
	twice.AssertIdempotent(t, storedresults.StoredFirstJob(), twice.LateRedrive(time.Hour))
}
