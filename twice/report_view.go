package twice

import (
	"github.com/twicekit/twicekit/internal/report"
)

// finished is the report as internal/report writes its text, Markdown and
// JSON; drawn, its findings carry their runs for the Mermaid diagrams and
// the JSON timelines.
func (r *Report) finished(drawn bool) report.Finished {
	v := report.Finished{Job: r.Job, Tokens: r.Tokens(), NotChecked: r.notChecked()}
	if r.Err != nil {
		v.Failed, v.Err = true, r.Err.Error()
	}
	for _, f := range r.Findings {
		rf := report.Finding{
			Headline: f.Headline,
			Token:    f.Token,
			Kind:     f.Scenario.Kind.String(),
			Timeline: f.Timeline,
			Problems: problemTexts(f.Problems),
			Database: f.Database,
			Hints:    f.Hints,
			Replay:   replayLine(r.testName, f.Token),
		}
		for _, m := range f.Effects {
			rf.Effects = append(rf.Effects, m.String())
			rf.Mismatches = append(rf.Mismatches, report.JSONMismatch{Kind: m.Kind, Key: m.Key, Payload: m.Payload, Policy: m.Policy.String(), Want: m.Want, Got: m.Got, Text: m.String()})
		}
		if f.run != nil && drawn {
			run := reportRun(f.run)
			rf.Run = &run
		}
		v.Findings = append(v.Findings, rf)
	}
	return v
}

// reportRun is a scenario's run as internal/report draws it.
func reportRun(sr *ScenarioRun) report.Run {
	var r report.Run
	for _, a := range sr.Attempts {
		r.Attempts = append(r.Attempts, reportAttempt(a))
	}
	if it := sr.interleaving; it != nil {
		v := &report.Interleaving{
			Attempts:  it.trace.Attempts,
			Events:    it.trace.Events,
			Schedule:  it.trace.Token(),
			Isolation: it.isolation.String(),
		}
		if it.stuck != nil {
			n := min(it.trace.Attempts, len(sr.Attempts))
			for _, i := range it.stuck.Stuck {
				if i < n {
					v.Stuck = append(v.Stuck, report.Stuck{Attempt: i, Note: it.stuckNote(i)})
				}
			}
		}
		r.Interleaving = v
	}
	return r
}

// reportAttempt is an attempt as internal/report draws it.
func reportAttempt(a AttemptRecord) report.Attempt {
	v := report.Attempt{
		Name:    attemptName(a),
		Kind:    a.kind,
		Points:  a.Points,
		Outcome: outcome(a),
		CrashAt: a.CrashAt,
		Reason:  a.Reason,
		Crashed: a.Crashed,
		Note:    a.Note,
	}
	switch a.End() {
	case EndNotDelivered:
		v.End = report.NotDelivered
	case EndCrashedBeforeAck:
		v.End = report.CrashedBeforeAck
	case EndCrashed:
		v.End = report.Crashed
	}
	return v
}
