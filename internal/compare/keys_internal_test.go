package compare

import "testing"

func paymentLabel(key string) string { return "payment POST /v1/payouts (Idempotency-Key " + key + ")" }

// keyLabels are the labels of payment points sent with these keys.
func keyLabels(keys ...string) []string {
	var labels []string
	for _, k := range keys {
		labels = append(labels, paymentLabel(k))
	}
	return labels
}

func TestKeyAliasesKeepTheReferenceKeysAndNumberTheOthers(t *testing.T) {
	ref := keyLabels("payout-381-2026-W42", "0b7f1c2e-aaaa")
	sr := keyLabels("payout-381-2026-W42", "9a302344-b0c0-d340", "order-1234567", "order-12345678", "payout-381", "2")
	k := NewKeyAliases(ref, sr)
	labels := []struct{ in, want string }{
		{paymentLabel("payout-381-2026-W42"), paymentLabel("payout-381-2026-W42")},
		{paymentLabel("9a302344-b0c0-d340"), paymentLabel("‹new key 1›")},
		{paymentLabel("order-1234567"), paymentLabel("‹new key 2›")},
		{paymentLabel("order-12345678"), paymentLabel("‹new key 3›")},
		{paymentLabel("payout-381"), paymentLabel("‹new key 4›")},
		{paymentLabel("2"), paymentLabel("‹new key 5›")},
		{"SELECT 1", "SELECT 1"},
	}
	for _, c := range labels {
		if got := k.Label(c.in); got != c.want {
			t.Errorf("label(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	texts := []struct{ in, want string }{
		{"the key changed between attempts (order-1234567, order-12345678)", "the key changed between attempts (‹new key 2›, ‹new key 3›)"},
		{"effects: " + paymentLabel("9a302344-b0c0-d340") + ": refused", "effects: " + paymentLabel("‹new key 1›") + ": refused"},
		{"sent payout-381-2026-W42 twice", "sent payout-381-2026-W42 twice"}, // a reference key that starts with a new one
		{"2 of 2 scenarios", "2 of 2 scenarios"}, // short keys change only in labels
	}
	for _, c := range texts {
		if got := k.Text(c.in); got != c.want {
			t.Errorf("text(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
