package invoice_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/invoice"
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

// Without the normalisation every scenario differs from the reference run
// in email_sent_at alone: now() is a different time in each.
func TestNowNeedsNormalizing(t *testing.T) {
	t.Parallel()
	rep := check(t, invoice.GuardedJob(), invoice.AtMostOnce, twice.Only("sequential"))
	require.Equal(t, []string{"sequential"}, story.Sequential(rep))
	f := story.Find(rep, "sequential")
	require.Equal(t, []string{"invoices"}, story.Tables(f))
	require.Empty(t, f.Effects)
	d := f.Database[0]
	require.Len(t, d.Missing, 1)
	require.Len(t, d.Extra, 1)
	want, got := d.Missing[0].String(), d.Extra[0].String()
	const same = "(id=381, email='billing@spice-route.example', amount_paise=8400000, email_sent_at="
	require.True(t, strings.HasPrefix(want, same), want)
	require.True(t, strings.HasPrefix(got, same), got)
	require.NotEqual(t, want, got, "the times differ")
}
