package twice_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/twice"
)

// TestTheRunnerDecidesWhatPlaysAndItsWords: a check-then-act in two
// autocommit statements (raceAfterSleeps(0)) is flagged by an overlap under
// the default runner, whose report says it assumed a lease and names the
// other runners; under InProcessScheduler it passes and no line speaks of
// a lease or a visibility timeout; under LockingConsumer only two copies
// at once flag it, never an overlap of one job.
func TestTheRunnerDecidesWhatPlaysAndItsWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rep := twice.Check(ctx, raceAfterSleeps(0))
	require.NoError(t, rep.Err)
	require.NotEmpty(t, rep.Findings, rep.String())
	require.True(t, strings.HasPrefix(rep.Findings[0].Token, "overlap@"), rep.String())
	require.Contains(t, rep.String(), "\nwhy:\n  two deliveries of one job at once assume a queue with a lease (twice.LeaseQueue, the default): its visibility timeout ran out while the first delivery still ran. "+
		"A runner that holds a row lock until its ack never does that: declare it with twice.LockingConsumer(); an in-process scheduler neither overlaps a run nor enqueues it twice: twice.InProcessScheduler()\n")
	js, err := rep.JSON()
	require.NoError(t, err)
	require.Contains(t, string(js), `"runner": "lease queue"`)

	rep = twice.Check(ctx, raceAfterSleeps(0), twice.InProcessScheduler())
	require.True(t, rep.OK(), rep.String())
	for _, word := range []string{"lease", "visibility timeout"} {
		require.NotContains(t, rep.String(), word)
	}
	require.Contains(t, rep.String(), "\nduplicate enqueue not checked: an in-process scheduler (twice.InProcessScheduler) never enqueues a run twice")
	require.Contains(t, rep.String(), "\nconcurrent deliveries not checked: an in-process scheduler (twice.InProcessScheduler) never starts a run while the last one runs")

	rep = twice.Check(ctx, raceAfterSleeps(0), twice.LockingConsumer())
	require.NoError(t, rep.Err)
	require.NotEmpty(t, rep.Findings, rep.String())
	for _, f := range rep.Findings {
		require.True(t, strings.HasPrefix(f.Token, "duplicate-"), "%s flagged it: %s", f.Token, rep.String())
	}
	require.NotContains(t, rep.String(), "visibility timeout")
	require.Contains(t, rep.String(), "\noverlapping deliveries of one job not checked (two copies of it at once are): a locking consumer (twice.LockingConsumer) holds the job's row lock until its ack, so it never runs one job twice at once")
}

// TestAnInProcessSchedulersRetryIsTheNextScheduledRun: the headlines of
// an unguarded increment under InProcessScheduler speak of the next
// scheduled run, never of a redelivery or an ack.
func TestAnInProcessSchedulersRetryIsTheNextScheduledRun(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), loyaltyJob("increment points", incrementPoints), twice.InProcessScheduler())
	require.NoError(t, rep.Err)
	var headlines []string
	for _, f := range rep.Findings {
		headlines = append(headlines, f.Headline)
	}
	require.Equal(t, []string{
		"not idempotent: the next scheduled run: the job ran again after a run that succeeded",
		"not idempotent: the process died after the last point (1 of 1), before the run was marked done, then the next scheduled run",
	}, headlines)
}
