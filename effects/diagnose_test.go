package effects_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/twicekit/twicekit/effects"
)

func TestDiagnoseKeyChanged(t *testing.T) {
	want := []effects.Effect{{Kind: "payment", Key: "k0", Payload: `{"amount":8400}`}}
	got := []effects.Effect{
		{Kind: "email", Key: "ann@example.com", Payload: "x"},
		{Kind: "payment", Key: "k1", Payload: `{"amount":8400}`},
		{Kind: "payment", Key: "k2", Payload: `{"amount":8400}`},
	}
	assert.Equal(t, []string{"the key changed between attempts (k1, k2): derive it from the job, not the attempt"},
		effects.Diagnose(want, got))
	// Once under a new key is not a double charge: nothing to say.
	assert.Nil(t, effects.Diagnose(want, got[:2]))
	// The reference made two such payouts itself: nothing to say.
	assert.Nil(t, effects.Diagnose(got, got))
}

func TestDiagnoseNoKeyAndForgottenKey(t *testing.T) {
	want := []effects.Effect{{Kind: "payment", Key: "k", Payload: `{"amount":1}`}, {Kind: "payment", Payload: `{"amount":2}`}}
	got := []effects.Effect{
		{Kind: "payment", Key: "k", Payload: `{"amount":1}`},
		{Kind: "payment", Payload: `{"amount":2}`},
		{Kind: "payment", Key: "k", Payload: `{"amount":1}`},
		{Kind: "payment", Payload: `{"amount":2}`},
	}
	assert.Equal(t, []string{
		"the provider applied key k 2 times: it had forgotten the key (the retry came after its idempotency window)",
		`the same payment was sent 2 times without an Idempotency-Key ({"amount":2}): send a key derived from the job, so the provider drops the retry`,
	}, effects.Diagnose(want, got))
}

func TestDiagnoseRejectedThroughProvider(t *testing.T) {
	p, log, _ := newProvider(t)
	c := p.Client(nil)
	post(t, c, p.URL(), "payout-restaurant-381-2026-W42", `{"amount":8400,"currency":"inr"}`)
	r := post(t, c, p.URL(), "payout-restaurant-381-2026-W42", `{"amount":8450,"currency":"inr"}`)
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Equal(t, []string{
		"the retry computed a different request (amount 8400 → 8450): store what you computed before acting on it",
	}, effects.Diagnose(log.Effects(), log.Effects(), p.Rejected()...))

	assert.Equal(t, []string{
		`the retry computed a different request (amount 1 → 2, currency (none) → inr, meta {"a":1} → {"a":2}): store what you computed before acting on it`,
		`the retry computed a different request ("x" → "y"): store what you computed before acting on it`,
	}, effects.Diagnose(nil, nil,
		effects.Rejection{Key: "k", First: `{"amount":1,"meta":{"a":1}}`, Got: `{"amount":2,"currency":"inr","meta":{"a":2}}`},
		effects.Rejection{Key: "k", First: `x`, Got: `y`},
		effects.Rejection{Key: "k", First: `x`, Got: `y`}, // said once
	))
}

func TestExplain(t *testing.T) {
	dup := effects.Mismatch{Kind: "email", Policy: effects.ExactlyOnce, Key: "ann@example.com", Payload: "Your receipt", Want: 1, Got: 2}
	assert.Equal(t, `email ann@example.com "Your receipt" is made twice here and once in the reference run: the job makes it before recording that it did, so a crash or a lost reply between the two repeats it; record first to lose it instead (at-most-once), or declare "email" at-least-once if a rare duplicate beats a missing one`, effects.Explain(dup))
	missing := effects.Mismatch{Kind: "email", Policy: effects.ExactlyOnce, Key: "ann@example.com", Payload: "Invoice", Want: 1, Got: 0}
	assert.Equal(t, `email ann@example.com "Invoice" is made 0 times here and once in the reference run: the job records that it did it before making it, so a crash between the two loses it; make it first to risk a duplicate instead (at-least-once), or declare "email" at-most-once if a missing one beats a duplicate`, effects.Explain(missing))
	extra := effects.Mismatch{Kind: "email", Key: "ann@example.com", Payload: "x", Want: 0, Got: 1}
	assert.Equal(t, `email ann@example.com "x" was never made by the reference run: a retry computed a different email; store what you computed before acting on it`, effects.Explain(extra))
	pay := effects.Mismatch{Kind: "payment", Payload: `{"amount":8400}`, Want: 1, Got: 3}
	assert.Equal(t, `payment "{\"amount\":8400}" is made 3 times here and once in the reference run: send an Idempotency-Key derived from the job, and redeliver within the provider's window`, effects.Explain(pay))
}
