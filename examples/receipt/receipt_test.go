package receipt_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/internal/storytest"
	"github.com/twicekit/twicekit/examples/receipt"
	"github.com/twicekit/twicekit/twice"
)

func TestMain(m *testing.M) { storytest.Main(m) }

var check = storytest.Check

const twoReceipts = `email ann@example.com "Your receipt for order 9812\nTotal: ₹1299.00": want 1, got 2 (exactly-once)`

func TestSendThenMarkSendsTwiceAfterACrash(t *testing.T) {
	t.Parallel()
	rep := check(t, receipt.SendThenMarkJob())
	// Point 2 is the email, point 3 the update that marks the order: a crash
	// before the update, a crash right after the provider took the email, and
	// a lost reply from the provider all send the receipt again.
	require.Equal(t, []string{"crash@3", "crash-after@2", "reply-lost@2"}, story.Sequential(rep), rep.String())
	for _, tok := range story.Sequential(rep) {
		f := story.Find(rep, tok)
		require.Empty(t, f.Database, tok)
		require.Equal(t, []string{twoReceipts}, story.Mismatches(f), tok)
	}
}

func TestSendThenMarkIsAtLeastOnce(t *testing.T) {
	t.Parallel()
	twice.AssertIdempotent(t, receipt.SendThenMarkJob(), twice.EffectPolicy("email", effects.AtLeastOnce))
}

func TestMarkThenSendLosesTheReceiptAfterACrash(t *testing.T) {
	t.Parallel()
	rep := check(t, receipt.MarkThenSendJob())
	require.Equal(t, []string{"crash@2"}, story.Sequential(rep), rep.String())
	f := story.Find(rep, "crash@2")
	require.Empty(t, f.Database)
	require.Equal(t, []string{`email ann@example.com "Your receipt for order 9812\nTotal: ₹1299.00": want 1, got 0 (exactly-once)`},
		story.Mismatches(f))
}

func TestMarkThenSendIsAtMostOnce(t *testing.T) {
	t.Parallel()
	twice.AssertIdempotent(t, receipt.MarkThenSendJob(), twice.EffectPolicy("email", effects.AtMostOnce))
}

// Declaring the wrong policy is caught too: send-then-mark can send twice.
func TestSendThenMarkIsNotAtMostOnce(t *testing.T) {
	t.Parallel()
	rep := check(t, receipt.SendThenMarkJob(), receipt.AtMostOnce)
	require.Equal(t, []string{"crash@3", "crash-after@2", "reply-lost@2"}, story.Sequential(rep), rep.String())
}
