package findings

import (
	"errors"
	"slices"

	"github.com/twicekit/twicekit/internal/compare"
)

// The text rewrites of internal/compare applied to a run and a finding.

// pointLabels lists the labels of the run's points and crash points,
// attempt by attempt, for compare.NewKeyAliases.
func pointLabels(r *Run) []string {
	var labels []string
	for _, a := range r.Attempts {
		for _, s := range a.Points {
			labels = append(labels, s.Label)
		}
		labels = append(labels, a.CrashAt.Label)
	}
	return labels
}

// aliasKeys returns a copy of r for printing, with the keys of its labels,
// errors and outcomes replaced; r itself is left as it is.
func aliasKeys(k *compare.KeyAliases, r *Run) *Run {
	if k.None() {
		return r
	}
	return rewrite(r, k.Label, k.Text)
}

// labelled is r with the queue's labels on its points (r when the queue
// gave none).
func labelled(r *Run, label func(string) string) *Run {
	if label == nil {
		return r
	}
	return rewrite(r, label, func(s string) string { return s })
}

// rewrite returns a copy of r for printing, with label applied to the
// labels of its points and text to its errors and outcomes; r itself is
// left as it is.
func rewrite(r *Run, label, text func(string) string) *Run {
	view := *r
	view.Attempts = make([]Attempt, len(r.Attempts))
	for i, a := range r.Attempts {
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
	if it := r.Interleaving; it != nil {
		itv := *it
		itv.Events = slices.Clone(it.Events)
		for i := range itv.Events {
			itv.Events[i].Step.Label = label(itv.Events[i].Step.Label)
		}
		view.Interleaving = &itv
	}
	return &view
}

// Problem is a promise a scenario broke besides its rows and effects
// (twice's Problem): its kind, the attempt it names, its text.
type Problem struct {
	Kind    int
	Attempt string
	Text    string
}

// problemTexts is the text of each problem.
func problemTexts(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Text)
	}
	return out
}

// rewriteProblems rewrites every problem's text with f (placeholders,
// Idempotency-Key aliases), keeping the kinds.
func rewriteProblems(ps []Problem, f func([]string) []string) []Problem {
	if len(ps) == 0 {
		return ps
	}
	texts := f(problemTexts(ps))
	out := make([]Problem, len(ps))
	for i, p := range ps {
		p.Text = texts[i]
		out[i] = p
	}
	return out
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
	if f.Run != nil { // what the Markdown and JSON reports draw: the same placeholders
		f.Run = rewrite(f.Run, p.Text, p.Text)
	}
}
