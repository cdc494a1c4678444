package invoice_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/invoice"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

func TestWithoutTheGuardTwoDeliveriesAtOnceBothSend(t *testing.T) {
	t.Parallel()
	rep := check(t, invoice.CheckThenMarkJob(), invoice.NormalizeSentAt, invoice.AtMostOnce)
	require.Empty(t, story.Sequential(rep), "one delivery at a time, the unguarded job looks fine:\n%s", rep)
	require.True(t, story.RanConcurrent(rep), "the check ran no concurrent scenario:\n%s", rep)
	conc := story.Concurrent(rep)
	require.NotEmpty(t, conc, "no concurrent scenario caught the race:\n%s", rep)
	f := story.Find(rep, conc[0])
	require.Empty(t, f.Database, "both mark the invoice, which is marked")
	require.Equal(t, []string{`email billing@spice-route.example "Invoice 381\nAmount due: ₹84000": want 1, got 2 (at-most-once)`},
		story.Mismatches(f))
}

func TestGuardedMarksBeforeItSends(t *testing.T) {
	t.Parallel()
	rep := check(t, invoice.GuardedJob(), invoice.NormalizeSentAt)
	// Points: the load (1), the guarded update (2), the email (3). A crash
	// before the email leaves the invoice marked and unsent.
	require.Equal(t, []string{"crash@3"}, story.Sequential(rep), rep.String())
	f := story.Find(rep, "crash@3")
	require.Empty(t, f.Database)
	require.Equal(t, []string{`email billing@spice-route.example "Invoice 381\nAmount due: ₹84000": want 1, got 0 (exactly-once)`},
		story.Mismatches(f))
}

func TestGuardedIsAtMostOnce(t *testing.T) {
	t.Parallel()
	twice.AssertIdempotent(t, invoice.GuardedJob(), invoice.NormalizeSentAt, twice.EffectPolicy("email", effects.AtMostOnce))
}

// Without the normalisation the guarded job passes too: email_sent_at
// differs between two clean runs, so twice compares it by shape.
func TestNowIsComparedByShape(t *testing.T) {
	t.Parallel()
	rep := check(t, invoice.GuardedJob(), invoice.AtMostOnce, twice.WithoutConcurrency("the sequential scenarios show it"))
	require.True(t, rep.OK(), rep.String())
	require.Equal(t, []string{"invoices.email_sent_at"}, rep.Varying)
}

// With twice.ExactValues() every scenario differs from the reference run in
// email_sent_at alone: now() is a different time in each. The report says
// so, and prints the times as placeholders.
func TestNowNeedsNormalizingUnderExactValues(t *testing.T) {
	t.Parallel()
	rep := check(t, invoice.GuardedJob(), invoice.AtMostOnce, twice.ExactValues(), twice.Only("sequential"))
	require.Equal(t, []string{"sequential"}, story.Sequential(rep))
	f := story.Find(rep, "sequential")
	require.Equal(t, []string{"invoices"}, story.Tables(f))
	require.Empty(t, f.Effects)
	require.Equal(t, "invoices:\n"+
		"  - (id=381, email='billing@spice-route.example', amount_paise=8400000, email_sent_at=‹time 1›)\n"+
		"  + (id=381, email='billing@spice-route.example', amount_paise=8400000, email_sent_at=‹time 2›)\n",
		pgfixture.FormatDiff(f.Database))
	require.Len(t, f.Hints, 1)
	require.True(t, strings.HasPrefix(f.Hints[0], "invoices differs only in email_sent_at (timestamptz), a time that differs between two clean runs too"), f.Hints[0])
}
