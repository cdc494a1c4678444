package refund_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/refund"
	"github.com/twicekit/twicekit/twice"
)

const payment = `payment "/v1/refunds {\"amount\":2000,\"charge\":\"ch_6735\",\"metadata\":{\"order\":\"6735\"}}"`

func TestStripeGoKeyRefundsTwice(t *testing.T) {
	t.Parallel()
	rep := check(t, refund.AutoKeyJob())
	// Points: the lookup (1), stripe-go's POST /v1/refunds (2), the insert (3).
	require.Equal(t, []string{"crash@3", "crash-after@2"}, story.Sequential(rep), rep.String())
	if story.RanConcurrent(rep) {
		require.Equal(t, []string{"overlap@1"}, story.Concurrent(rep), rep.String())
	}
	for _, tok := range story.Sequential(rep) {
		f := story.Find(rep, tok)
		require.Equal(t, []string{payment + ": want 1, got 2 (exactly-once)"}, story.Mismatches(f), tok)
		require.Equal(t, "the key changed between attempts (‹new key 1›, ‹new key 2›): derive it from the job, not the attempt", f.Hints[0], tok)
		// The real client's requests are on the timeline, under stable names.
		require.Contains(t, f.Timeline, "  attempt 1 of job-1:\n      1  SELECT stripe_refund FROM refunds WHERE order_id = $1\n      2  payment POST /v1/refunds (Idempotency-Key ‹new key 1›)\n", tok)
		require.Contains(t, f.Timeline, "  attempt 2 of job-1:\n      1  SELECT stripe_refund FROM refunds WHERE order_id = $1\n      2  payment POST /v1/refunds (Idempotency-Key ‹new key 2›)\n", tok)
		// The second refund's ID is recorded, not the first one's.
		require.Equal(t, []string{"refunds"}, story.Tables(f), tok)
		require.Equal(t, "(order_id=6735, amount_cents=2000, stripe_refund='re_000002')", f.Database[0].Extra[0].String(), tok)
	}
	require.Equal(t, "not idempotent: crash after point 2 of 3 was applied (payment POST /v1/refunds (Idempotency-Key ‹new key 1›)), before the job heard back, then redelivery",
		story.Find(rep, "crash-after@2").Headline)
}

// stripe-go's key is made once per call: ns since 1970, "_", six characters
// of base64 (params.go:338-345 in v82.5.1).
var stripeGoKey = regexp.MustCompile(`^payment POST /v1/refunds \(Idempotency-Key [0-9]{19}_[A-Za-z0-9_-]{6}\)$`)

// A lost reply is retried by stripe-go itself, with the same key, and the
// provider replays the first refund: reply-lost@2 passes.
func TestStripeGoRetriesALostReplyWithItsKey(t *testing.T) {
	t.Parallel()
	rep := check(t, refund.AutoKeyJob(), twice.Only("reply-lost@2"))
	require.True(t, rep.OK(), rep.String())
	require.Len(t, rep.Scenarios, 1)
	a := rep.Scenarios[0].Attempts
	require.Len(t, a, 1, "the attempt survived its lost reply")
	var labels []string
	for _, s := range a[0].Points {
		labels = append(labels, s.Label)
	}
	require.Len(t, labels, 4, labels)
	require.Equal(t, "SELECT stripe_refund FROM refunds WHERE order_id = $1", labels[0])
	require.Regexp(t, stripeGoKey, labels[1])
	require.Equal(t, labels[1], labels[2], "the retry carries the same key")
	require.Len(t, rep.Scenarios[0].Effects, 1, "the retry was replayed, not applied")
}

func TestKeyFromTheJobRefundsOnce(t *testing.T) {
	t.Parallel()
	rep := check(t, refund.JobKeyJob(), twice.LateRedrive(time.Hour))
	require.True(t, rep.OK(), rep.String())
	require.Contains(t, rep.Tokens(), "crash-after@2")
	require.Contains(t, rep.Tokens(), "reply-lost@2")
	require.Len(t, rep.Reference.Effects, 1)
	e := rep.Reference.Effects[0]
	require.Equal(t, "refund-order-6735", e.Key)
	require.Equal(t, `/v1/refunds {"amount":2000,"charge":"ch_6735","metadata":{"order":"6735"}}`, e.Payload)
}

func TestRedriveAfterTheKeyWindowRefundsAgain(t *testing.T) {
	t.Parallel()
	rep := check(t, refund.JobKeyJob(), twice.LateRedrive(48*time.Hour), twice.WithoutConcurrency("covered by TestKeyFromTheJobRefundsOnce"))
	require.Equal(t, []string{"redrive-48h@2"}, story.Sequential(rep), rep.String())
	f := story.Find(rep, "redrive-48h@2")
	require.Equal(t, "not idempotent: late redrive: crash after point 2 of 3 was applied (payment POST /v1/refunds (Idempotency-Key refund-order-6735)), redriven after 48h", f.Headline)
	require.Equal(t, []string{payment + ": want 1, got 2 (exactly-once)"}, story.Mismatches(f))
	require.Equal(t, "the provider applied key refund-order-6735 2 times: it had forgotten the key (the retry came after its idempotency window)", f.Hints[0])
}

func TestForms(t *testing.T) {
	t.Parallel()
	for _, f := range refund.Forms() {
		rep := check(t, f.Job, f.Options...)
		ok, verdict := story.Verdict(f, rep)
		require.True(t, ok, "%s\n%s", verdict, rep.String())
	}
}
