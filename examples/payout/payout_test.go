package payout_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/payout"
	"github.com/twicekit/twicekit/twice"
)

const payment = `payment "{\"amount\":8400000,\"currency\":\"INR\",\"description\":\"payout 2026-W42\",\"destination\":\"restaurant_381\"}"`

func TestRandomKeyPaysTwice(t *testing.T) {
	t.Parallel()
	rep := check(t, payout.RandomKeyJob())
	// Points: the lookup (1), the payout (2), the insert (3).
	require.Equal(t, []string{"crash@3", "crash-after@2", "reply-lost@2"}, story.Sequential(rep), rep.String())
	for _, tok := range story.Sequential(rep) {
		f := story.Find(rep, tok)
		require.Equal(t, []string{payment + ": want 1, got 2 (exactly-once)"}, story.Mismatches(f), tok)
		require.Contains(t, f.Hints[0], "the key changed between attempts (", tok)
		require.Contains(t, f.Hints[0], "): derive it from the job, not the attempt", tok)
		// The second payout's ID is recorded, not the first one's.
		require.Equal(t, []string{"payouts"}, story.Tables(f), tok)
		require.Equal(t, "(restaurant_id=381, week='2026-W42', amount_paise=8400000, provider_id='po_000002')", f.Database[0].Extra[0].String())
	}
}

func TestKeyFromTheJobPaysOnce(t *testing.T) {
	t.Parallel()
	twice.AssertIdempotent(t, payout.JobKeyJob(), twice.LateRedrive(time.Hour))
}

func TestRedriveAfterTheKeyWindowPaysAgain(t *testing.T) {
	t.Parallel()
	rep := check(t, payout.JobKeyJob(), twice.LateRedrive(48*time.Hour))
	require.Equal(t, []string{"redrive-48h@2"}, story.Sequential(rep), rep.String())
	f := story.Find(rep, "redrive-48h@2")
	require.Equal(t, "not idempotent: late redrive: crash after point 2 of 3 was applied (payment POST /v1/payouts (Idempotency-Key payout-restaurant-381-2026-W42)), redriven after 48h", f.Headline)
	require.Equal(t, []string{payment + ": want 1, got 2 (exactly-once)"}, story.Mismatches(f))
	require.Contains(t, f.Hints[0], "the provider applied key payout-restaurant-381-2026-W42 2 times: it had forgotten the key")
}
