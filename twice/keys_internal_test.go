package twice

import (
	"errors"
	"testing"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/sched"
)

func paymentLabel(key string) string { return "payment POST /v1/payouts (Idempotency-Key " + key + ")" }

func keyRun(keys ...string) *ScenarioRun {
	var steps []faults.Step
	for i, k := range keys {
		steps = append(steps, faults.Step{Index: i + 1, Label: paymentLabel(k)})
	}
	return &ScenarioRun{Attempts: []AttemptRecord{{Points: steps}}}
}

func TestKeyAliasesKeepTheReferenceKeysAndNumberTheOthers(t *testing.T) {
	ref := keyRun("payout-381-2026-W42", "0b7f1c2e-aaaa")
	sr := keyRun("payout-381-2026-W42", "9a302344-b0c0-d340", "order-1234567", "order-12345678", "payout-381", "2")
	k := newKeyAliases(ref, sr)
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
		if got := k.label(c.in); got != c.want {
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
		if got := k.text(c.in); got != c.want {
			t.Errorf("text(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestKeyAliasesRewriteACopyOfTheRun(t *testing.T) {
	ref := keyRun("stable-key-1")
	sr := keyRun("random-abcdef12", "stable-key-1")
	sr.Attempts[0].Crashed = true
	sr.Attempts[0].CrashAt = faults.Step{Index: 2, Label: paymentLabel("random-abcdef12")}
	sr.Attempts[0].Err = errors.New("payment random-abcdef12 refused")
	sr.interleaving = &interleaving{trace: &sched.Trace{Attempts: 1, Events: []sched.Event{
		{Kind: sched.Released, Step: sr.Attempts[0].Points[0]},
	}}}
	view := newKeyAliases(ref, sr).run(sr)
	a := view.Attempts[0]
	if a.Points[0].Label != paymentLabel("‹new key 1›") || a.Points[1].Label != paymentLabel("stable-key-1") ||
		a.CrashAt.Label != paymentLabel("‹new key 1›") || a.Err.Error() != "payment ‹new key 1› refused" ||
		view.interleaving.trace.Events[0].Step.Label != paymentLabel("‹new key 1›") {
		t.Errorf("the view was not rewritten: %+v %+v", a, view.interleaving.trace.Events)
	}
	if sr.Attempts[0].Points[0].Label != paymentLabel("random-abcdef12") ||
		sr.interleaving.trace.Events[0].Step.Label != paymentLabel("random-abcdef12") {
		t.Error("the run itself was changed")
	}
	if same := newKeyAliases(ref, ref).run(ref); same != ref {
		t.Error("a run without new keys is printed as it is")
	}
}

// What a verbose test logs about values that differ between clean runs.
func TestVaryingLine(t *testing.T) {
	rep := &Report{Job: "ship order 11", Varying: []string{"orders.shipped_at", "users.token"}}
	if got, want := varyingLine(rep), "twice: ship order 11: compared by shape (they differ between two clean runs): orders.shipped_at, users.token"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
