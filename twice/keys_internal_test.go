package twice

import (
	"testing"

	"github.com/twicekit/twicekit/faults"
)

func TestKeyAliasesKeepTheReferenceKeysAndNumberTheOthers(t *testing.T) {
	label := func(key string) string { return "payment POST /v1/payouts (Idempotency-Key " + key + ")" }
	run := func(keys ...string) *scenarioRun {
		var steps []faults.Step
		for i, k := range keys {
			steps = append(steps, faults.Step{Index: i + 1, Label: label(k)})
		}
		return &scenarioRun{Attempts: []attemptRecord{{Steps: steps}}}
	}
	ref := run("payout-381-W42", "0b7f1c2e-aaaa")
	sr := run("payout-381-W42", "9a302344-b0c0-d340", "5b268d5b-762e-8cca", "2")
	k := newKeyAliases(ref, sr)
	cases := []struct{ in, want string }{
		{label("payout-381-W42"), label("payout-381-W42")},
		{label("9a302344-b0c0-d340"), label("‹new key 1›")},
		{label("5b268d5b-762e-8cca"), label("‹new key 2›")},
		{label("2"), label("‹new key 3›")},
		{"payment POST /v1/payouts (Idempotency-Key 5b268d5b-7…", "payment POST /v1/payouts (Idempotency-Key ‹new key 2›"},
		{"the key changed between attempts (9a302344-b0c0-d340, 5b268d5b-762e-8cca)", "the key changed between attempts (‹new key 1›, ‹new key 2›)"},
		{"2 of 2 scenarios", "2 of 2 scenarios"}, // short keys change only in labels
	}
	for _, c := range cases {
		if got := k.apply(c.in); got != c.want {
			t.Errorf("apply(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	if got := newKeyAliases(ref, ref).apply(label("0b7f1c2e-aaaa")); got != label("0b7f1c2e-aaaa") {
		t.Errorf("a reference key changed: %q", got)
	}
}
