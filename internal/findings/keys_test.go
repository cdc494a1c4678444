package findings

import (
	"errors"
	"testing"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/compare"
	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/internal/sched"
)

func paymentLabel(key string) string { return "payment POST /v1/payouts (Idempotency-Key " + key + ")" }

func keyRun(keys ...string) *Run {
	var steps []faults.Step
	for i, k := range keys {
		steps = append(steps, faults.Step{Index: i + 1, Label: paymentLabel(k)})
	}
	return &Run{Attempts: []Attempt{{Points: steps}}}
}

func TestKeyAliasesRewriteACopyOfTheRun(t *testing.T) {
	ref := keyRun("stable-key-1")
	sr := keyRun("random-abcdef12", "stable-key-1")
	sr.Attempts[0].Crashed = true
	sr.Attempts[0].CrashAt = faults.Step{Index: 2, Label: paymentLabel("random-abcdef12")}
	sr.Attempts[0].Err = errors.New("payment random-abcdef12 refused")
	sr.Interleaving = &report.Interleaving{Attempts: 1, Events: []sched.Event{
		{Kind: sched.Released, Step: sr.Attempts[0].Points[0]},
	}}
	view := aliasKeys(compare.NewKeyAliases(pointLabels(ref), pointLabels(sr)), sr)
	a := view.Attempts[0]
	if a.Points[0].Label != paymentLabel("‹new key 1›") || a.Points[1].Label != paymentLabel("stable-key-1") ||
		a.CrashAt.Label != paymentLabel("‹new key 1›") || a.Err.Error() != "payment ‹new key 1› refused" ||
		view.Interleaving.Events[0].Step.Label != paymentLabel("‹new key 1›") {
		t.Errorf("the view was not rewritten: %+v %+v", a, view.Interleaving.Events)
	}
	if sr.Attempts[0].Points[0].Label != paymentLabel("random-abcdef12") ||
		sr.Interleaving.Events[0].Step.Label != paymentLabel("random-abcdef12") {
		t.Error("the run itself was changed")
	}
	if same := aliasKeys(compare.NewKeyAliases(pointLabels(ref), pointLabels(ref)), ref); same != ref {
		t.Error("a run without new keys is printed as it is")
	}
}
