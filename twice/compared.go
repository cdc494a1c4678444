package twice

import (
	"github.com/twicekit/twicekit/internal/compare"
	"github.com/twicekit/twicekit/internal/findings"
	"github.com/twicekit/twicekit/internal/queue"
	"github.com/twicekit/twicekit/internal/report"
)

// The glue between a scenario's run and the comparison engine
// (internal/compare) and the findings made of it (internal/findings): the
// views of a run they read, and a finding turned back into twice's.

// compared is what the comparison reads of the run: its rows and effects.
func (sr *ScenarioRun) compared() compare.Run {
	return compare.Run{Snapshot: sr.Snapshot, Effects: sr.Effects}
}

// runOf is sr as a finding draws it.
func runOf(sr *ScenarioRun) *findings.Run {
	r := &findings.Run{}
	for _, a := range sr.Attempts {
		r.Attempts = append(r.Attempts, findings.Attempt{Name: attemptName(a), Kind: a.kind, Points: a.Points,
			Crashed: a.Crashed, CrashAt: a.CrashAt, Reason: a.Reason, Err: a.Err, Panic: a.Panic,
			End: findings.End(a.End()), Note: a.Note})
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

// findingScenario is sr as a finding is made of it: problems ps, hints of
// twice's own, and what its headline says of the queue, in the queue's
// words when QueueWords gave them (words is nil otherwise).
func findingScenario(sr *ScenarioRun, ps []Problem, hints []string, words func(Scenario, Happened, string) string) findings.Scenario {
	var queueWords func(queue.Happened, string) string
	if words != nil {
		queueWords = func(h queue.Happened, said string) string { return words(sr.Scenario, Happened(h), said) }
	}
	said := func(label string) string { // internal/queue/queue.go
		return queue.Said(sr.Scenario.words(label), queued(sr.Attempts), job1, sr.Scenario.Kind == AckLost, queueWords, sr.followUps)
	}
	return findings.Scenario{Run: runOf(sr), Compared: sr.compared(), Rejected: sr.Rejected, Hints: hints,
		Said: said, Point: sr.Scenario.Point, Problems: report.Copy[[]findings.Problem](ps)}
}

// findingOf is f, a finding of sr, as twice reports it (nil when f is).
func findingOf(sr *ScenarioRun, f *findings.Finding) *Finding {
	if f == nil {
		return nil
	}
	out := &Finding{Scenario: sr.Scenario, Headline: f.Headline, Timeline: f.Timeline, Database: f.Database,
		Effects: f.Effects, Hints: f.Hints, Token: sr.Scenario.Token(), run: f.Run}
	out.Problems = report.Map(f.Problems, func(p findings.Problem) Problem { return Problem{ProblemKind(p.Kind), p.Attempt, p.Text} })
	return out
}
