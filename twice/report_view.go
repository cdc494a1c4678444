package twice

import (
	"github.com/twicekit/twicekit/internal/report"
)

// finished is the report as internal/report writes its text, Markdown and
// JSON; drawn, its findings carry their runs for the Mermaid diagrams and
// the JSON timelines.
func (r *Report) finished(drawn bool) report.Finished {
	v := report.Finished{Job: r.Job, Tokens: r.Tokens(), NotChecked: r.left().NotChecked()} // the scenarios the check was told to skip, and why
	if r.Err != nil {
		v.Failed, v.Err = true, r.Err.Error()
	}
	for _, f := range r.Findings {
		rf := report.Finding{
			Headline: f.Headline,
			Token:    f.Token,
			Kind:     f.Scenario.Kind.String(),
			Timeline: f.Timeline,
			Problems: report.Map(f.Problems, Problem.String),
			Database: f.Database,
			Hints:    f.Hints,
			Replay:   replayLine(r.testName, f.Token),
		}
		for _, m := range f.Effects {
			rf.Effects = append(rf.Effects, m.String())
			rf.Mismatches = append(rf.Mismatches, report.JSONMismatch{Kind: m.Kind, Key: m.Key, Payload: m.Payload, Policy: m.Policy.String(), Want: m.Want, Got: m.Got, Text: m.String()})
		}
		if f.run != nil && drawn {
			run := f.run.Draw()
			rf.Run = &run
		}
		v.Findings = append(v.Findings, rf)
	}
	return v
}
