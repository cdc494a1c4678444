package processedjobs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/processedjobs"
	"github.com/twicekit/twicekit/twice"
)

func TestKeyedByJobIDIsSafeForRedeliveryOnly(t *testing.T) {
	t.Parallel()
	rep := check(t, processedjobs.ByJobIDJob())
	require.Equal(t, []string{"duplicate-enqueue"}, story.Sequential(rep), rep.String())
	require.Empty(t, story.Concurrent(rep), "redeliveries keep the job ID, at once too:\n%s", rep)
	f := story.Find(rep, "duplicate-enqueue")
	require.Equal(t, []string{"customers", "processed_jobs"}, story.Tables(f))
	require.Equal(t, "(id=77, points=220)", f.Database[0].Extra[0].String())
	require.Equal(t, "(key='job-2')", f.Database[1].Extra[0].String())
}

func TestKeyedByOrderIDIsIdempotent(t *testing.T) {
	t.Parallel()
	twice.AssertIdempotent(t, processedjobs.ByOrderIDJob())
}

func TestKeyedByJobIDWithATransactionalProducer(t *testing.T) {
	t.Parallel()
	twice.AssertIdempotent(t, processedjobs.ByJobIDJob(),
		twice.WithoutDuplicateEnqueue("enqueued in the same transaction as the order"))

	rep := check(t, processedjobs.ByJobIDJob(), processedjobs.TransactionalEnqueue)
	require.True(t, rep.OK(), rep.String())
	require.NotContains(t, rep.Tokens(), "duplicate-enqueue")
	require.Contains(t, rep.String(), "duplicate enqueue not checked: the job is enqueued in the same transaction as the order")
}
