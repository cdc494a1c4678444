package twice

import (
	"fmt"
	"time"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/findings"
	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/pgfixture"
)

// Finding is one scenario whose outcome broke a promise: the database or the
// effects differ from one clean run, or the job panicked, hung, never
// succeeded or bypassed its handles.
type Finding struct {
	Scenario Scenario
	// Headline names the broken promise and the scenario.
	Headline string
	// Timeline lists the attempts of the scenario and their points.
	Timeline string
	// Database lists the tables whose rows differ from the reference run.
	Database []pgfixture.TableDiff
	// Effects lists the effects whose counts break their policy.
	Effects []effects.Mismatch
	// Problems lists panics, hangs, give-ups and foreign contexts.
	Problems []Problem
	// Hints say which way the job chose to be wrong and how to fix it.
	Hints []string
	// Token replays exactly this scenario (-twice.run=TOKEN).
	Token string

	run *findings.Run // what the timeline shows, for the JSON and Markdown reports
}

// compareRun checks a scenario against the reference run
// (internal/findings). Values that differ between two clean runs compare by
// shape and print as placeholders (internal/compare).
func compareRun(ref, sr *ScenarioRun, cfg *config) *Finding {
	ps := append([]Problem(nil), sr.Problems...)
	if len(sr.Foreign) > 0 {
		ps = append(ps, foreignProblem(sr.Foreign))
	}
	if len(sr.Sessions) > 0 {
		ps = append(ps, foreignSessionProblem(sr.Sessions, nil))
	}
	hints := sessionStateHints(sr) // sessionstate.go
	if h := cfg.leaseHint(sr.Scenario); h != "" {
		hints = append(hints, h) // runner.go
	}
	r := findings.Reference{Run: runOf(ref), Compared: ref.compared(), Varying: ref.varying, KeyCopies: ref.keyCopies}
	f := findings.Compare(r, findingScenario(sr, ps, hints, cfg.queue.describe),
		findings.Config{Policies: cfg.Policies, Label: cfg.queue.Label, Words: cfg.Runner.Words}) // runner.go
	return findingOf(sr, f)
}

// referenceFinding reports a job that cannot even run once cleanly, or
// whose clean run the check could not see: it opened its own connection
// (ref.Sessions), or it changed the tables unseen with no statement seen.
func referenceFinding(ref *ScenarioRun, first AttemptRecord, unseen []string, q queueConfig) *Finding {
	var ps []Problem
	switch {
	case first.Panic != "" || first.Goexit != "":
		ps = append(ps, abortProblem(first, false))
	case first.Hung:
		ps = append(ps, hungProblem(first, 0))
	case len(first.AfterRun) > 0:
		ps = append(ps, afterRunProblem(first))
	case first.Err != nil && q.Snooze != nil && q.Snooze(first.Err) && len(ref.Foreign) == 0:
		ps = append(ps, Problem{Kind: ProblemCleanRunFailed, Attempt: attemptName(first),
			Text: report.SnoozedText(len(ref.Attempts), first.Err)})
	case first.Err != nil && !first.Terminal && len(ref.Foreign) == 0:
		ps = append(ps, Problem{Kind: ProblemCleanRunFailed, Attempt: attemptName(first),
			Text: report.CleanRunFailedText(first.Err, typeHint(first.Err))})
	}
	if len(ref.Foreign) > 0 {
		ps = append(ps, foreignProblem(ref.Foreign))
	}
	if len(ref.Sessions) > 0 || len(unseen) > 0 {
		ps = append(ps, foreignSessionProblem(ref.Sessions, unseen))
	}
	ps = append(ps, ref.followUpProblems...) // followups.go
	return findingOf(ref, findings.ReferenceFinding(findingScenario(ref, ps, nil, q.describe), q.Label))
}

// headline names the broken promises and the scenario, in the queue's own
// words when QueueWords gave them (words is nil otherwise).
func headline(f *Finding, sr *ScenarioRun, words func(Scenario, Happened, string) string) string {
	s := findingScenario(sr, f.Problems, nil, words)
	return findings.Headline(&findings.Finding{Database: f.Database, Effects: f.Effects, Problems: s.Problems}, s.Run, s)
}

func attemptName(a AttemptRecord) string {
	return fmt.Sprintf("attempt %d of %s", a.Number, a.JobID)
}

func hungProblem(a AttemptRecord, timeout time.Duration) Problem {
	if a.Slow && a.LockHolder != "" {
		return lockWaitProblem(a, report.TimeoutBound(timeout))
	}
	kind := ProblemHung
	if a.Slow {
		kind = ProblemSlow
	}
	return Problem{Kind: kind, Attempt: attemptName(a), Text: report.HungText(attemptName(a), a.Points, timeout, a.Slow, a.Leaked)}
}

func foreignProblem(labels []string) Problem {
	return Problem{Kind: ProblemForeignContext, Text: report.ForeignText(labels)}
}
