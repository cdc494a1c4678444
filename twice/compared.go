package twice

import (
	"errors"
	"slices"

	"github.com/twicekit/twicekit/internal/compare"
)

// The glue between a scenario's run and the comparison engine
// (internal/compare): what it reads of a run, and its text rewrites applied
// to a run and a finding.

// compared is what the comparison reads of the run: its rows and effects.
func (sr *ScenarioRun) compared() compare.Run {
	return compare.Run{Snapshot: sr.Snapshot, Effects: sr.Effects}
}

// pointLabels lists the labels of the run's points and crash points,
// attempt by attempt, for compare.NewKeyAliases.
func pointLabels(sr *ScenarioRun) []string {
	var labels []string
	for _, a := range sr.Attempts {
		for _, s := range a.Points {
			labels = append(labels, s.Label)
		}
		labels = append(labels, a.CrashAt.Label)
	}
	return labels
}

// aliasKeys returns a copy of sr for printing, with the keys of its labels,
// errors and outcomes replaced; sr itself is left as it is.
func aliasKeys(k *compare.KeyAliases, sr *ScenarioRun) *ScenarioRun {
	if k.None() {
		return sr
	}
	return rewriteRun(sr, k.Label, k.Text)
}

// rewriteRun returns a copy of sr for printing, with label applied to the
// labels of its points and text to its errors and outcomes; sr itself is
// left as it is.
func rewriteRun(sr *ScenarioRun, label, text func(string) string) *ScenarioRun {
	view := *sr
	view.Attempts = make([]AttemptRecord, len(sr.Attempts))
	for i, a := range sr.Attempts {
		a.Points = slices.Clone(a.Points)
		for j := range a.Points {
			a.Points[j].Label = label(a.Points[j].Label)
		}
		a.CrashAt.Label = label(a.CrashAt.Label)
		a.Reason, a.Panic = text(a.Reason), text(a.Panic)
		if a.Err != nil {
			a.Err = errors.New(text(a.Err.Error()))
		}
		view.Attempts[i] = a
	}
	if it := sr.interleaving; it != nil && it.trace != nil {
		itv := *it
		tr := *it.trace
		tr.Events = slices.Clone(tr.Events)
		for i := range tr.Events {
			tr.Events[i].Step.Label = label(tr.Events[i].Step.Label)
		}
		itv.trace = &tr
		view.interleaving = &itv
	}
	return &view
}

// numberPlaceholders rewrites every marker of a finding as its placeholder,
// in the order the report prints them.
func numberPlaceholders(f *Finding) {
	p := compare.NewPlaceholders()
	f.Headline = p.Text(f.Headline)
	f.Timeline = p.Text(f.Timeline)
	f.Problems = rewriteProblems(f.Problems, p.Texts)
	p.Diffs(f.Database)
	p.Mismatches(f.Effects)
	f.Hints = p.Texts(f.Hints)
	if f.run != nil { // what the Markdown and JSON reports draw: the same placeholders
		f.run = rewriteRun(f.run, p.Text, p.Text)
	}
}
