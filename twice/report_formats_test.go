package twice_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/twice"
)

// TestMarkdownDrawsTheTimeline: the Markdown report of a crash finding, of
// an interleaving with a lock wait (and who released it) and of an overlap,
// as golden files: the text report, then a Mermaid sequenceDiagram per
// finding.
func TestMarkdownDrawsTheTimeline(t *testing.T) {
	t.Parallel()
	crash := twice.Check(context.Background(), ordersJob("receipt: send, then mark", sendThenMark),
		twice.Only("crash@3"), twice.TestName("TestReceipt"))
	require.False(t, crash.OK())
	golden(t, "send_then_mark.md", crash.Markdown())

	overlap := twice.Check(context.Background(), ledgerNoUniqueJob("ledger: check, then act", checkThenAct),
		twice.Only("concurrent:A2B2ABA2B3"), twice.TestName("TestRewardOrder"))
	require.False(t, overlap.OK())
	golden(t, "concurrent_check_then_act.md", overlap.Markdown())

	paused := twice.Check(context.Background(), ledgerNoUniqueJob("ledger: check, then act", checkThenAct),
		twice.Only("overlap@2"), twice.TestName("TestRewardOrder"))
	require.False(t, paused.OK())
	golden(t, "overlap_check_then_act.md", paused.Markdown())
}

// TestCoverageSaysWhatAPassRan: the line a passing check logs under -v.
func TestCoverageSaysWhatAPassRan(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), loyaltyJob("ledger CTE", ledgerCTE))
	require.True(t, rep.OK(), rep.String())
	require.Equal(t, "twice: ledger CTE: idempotent in 8 scenarios: ack lost 1, crashes 2, duplicate enqueue 1, effect faults 0, interleavings 4 of 6 (READ COMMITTED)", rep.Coverage())

	rep = twice.Check(context.Background(), ordersJob("receipt", sendThenMark), twice.EffectPolicy("email", effects.AtLeastOnce), twice.WithoutConcurrency("a per-order lock in the queue"))
	require.True(t, rep.OK(), rep.String())
	require.Equal(t, "twice: receipt: idempotent in 7 scenarios: ack lost 1, crashes 3 (+1 covered), duplicate enqueue 1, effect faults 2, interleavings not checked", rep.Coverage())
}
