package twice

import (
	"fmt"
	"time"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/compare"
	"github.com/twicekit/twicekit/internal/queue"
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

	run *ScenarioRun // what the timeline shows, for the JSON and Markdown reports
}

// compareRun checks a scenario against the reference run. Values that differ
// between two clean runs compare by shape and print as placeholders
// (internal/compare).
func compareRun(ref, sr *ScenarioRun, cfg *config) *Finding {
	sh := ref.varying
	d := compare.Runs(sh, ref.keyCopies, ref.compared(), sr.compared(), cfg.policies)
	got := d.Got
	f := &Finding{
		Scenario: sr.Scenario,
		Database: d.Database,
		Effects:  d.Effects,
		Problems: append([]Problem(nil), sr.Problems...),
		Token:    sr.Scenario.Token(),
	}
	if len(sr.Foreign) > 0 {
		f.Problems = append(f.Problems, foreignProblem(sr.Foreign))
	}
	if len(sr.Sessions) > 0 {
		f.Problems = append(f.Problems, foreignSessionProblem(sr.Sessions, nil))
	}
	if len(f.Database) == 0 && len(f.Effects) == 0 && len(f.Problems) == 0 {
		return nil
	}
	f.Hints = d.Hints(sh, sr.Rejected)
	f.Hints = append(f.Hints, sessionStateHints(sr)...) // sessionstate.go
	if h := cfg.leaseHint(sr.Scenario); h != "" {
		f.Hints = append(f.Hints, h) // runner.go
	}
	keys := compare.NewKeyAliases(pointLabels(ref), pointLabels(sr))
	view := cfg.queue.labelled(aliasKeys(keys, sr))
	if sh != nil {
		view = rewriteRun(view, got.Text, got.Text)
		f.Problems, f.Hints = rewriteProblems(f.Problems, got.Texts), got.Texts(f.Hints)
	}
	f.Problems, f.Hints = rewriteProblems(f.Problems, keys.Texts), keys.Texts(f.Hints)
	view = rewriteRun(view, compare.MarkLiterals, compare.MarkLiterals)
	f.Problems, f.Hints = rewriteProblems(f.Problems, compare.MarkLiteralsIn), compare.MarkLiteralsIn(f.Hints)
	f.Headline = cfg.runner.Words(headline(f, view, cfg.queue.describe)) // runner.go
	f.Timeline = timeline(view)
	f.run = view
	numberPlaceholders(f)
	return f
}

// referenceFinding reports a job that cannot even run once cleanly, or
// whose clean run the check could not see: it opened its own connection
// (ref.Sessions), or it changed the tables unseen with no statement seen.
func referenceFinding(ref *ScenarioRun, first AttemptRecord, unseen []string, q queueConfig) *Finding {
	f := &Finding{Scenario: ref.Scenario, Token: ref.Scenario.Token()}
	switch {
	case first.Panic != "" || first.Goexit != "":
		f.Problems = append(f.Problems, abortProblem(first, false))
	case first.Hung:
		f.Problems = append(f.Problems, hungProblem(first, 0))
	case len(first.AfterRun) > 0:
		f.Problems = append(f.Problems, afterRunProblem(first))
	case first.Err != nil && q.Snooze != nil && q.Snooze(first.Err) && len(ref.Foreign) == 0:
		f.Problems = append(f.Problems, Problem{Kind: ProblemCleanRunFailed, Attempt: attemptName(first),
			Text: report.SnoozedText(len(ref.Attempts), first.Err)})
	case first.Err != nil && !first.Terminal && len(ref.Foreign) == 0:
		f.Problems = append(f.Problems, Problem{Kind: ProblemCleanRunFailed, Attempt: attemptName(first),
			Text: report.CleanRunFailedText(first.Err, typeHint(first.Err))})
	}
	if len(ref.Foreign) > 0 {
		f.Problems = append(f.Problems, foreignProblem(ref.Foreign))
	}
	if len(ref.Sessions) > 0 || len(unseen) > 0 {
		f.Problems = append(f.Problems, foreignSessionProblem(ref.Sessions, unseen))
	}
	f.Problems = append(f.Problems, ref.followUpProblems...) // followups.go
	if len(f.Problems) == 0 {
		return nil
	}
	view := rewriteRun(q.labelled(ref), compare.MarkLiterals, compare.MarkLiterals)
	f.Problems = rewriteProblems(f.Problems, compare.MarkLiteralsIn)
	f.Headline = headline(f, view, q.describe)
	f.Timeline = timeline(view)
	f.run = view
	numberPlaceholders(f)
	return f
}

// headline names the broken promises and the scenario, in the queue's own
// words when QueueWords gave them (words is nil otherwise).
func headline(f *Finding, sr *ScenarioRun, words func(Scenario, Happened, string) string) string {
	var promises []string
	for _, p := range f.Problems {
		promises = append(promises, p.Kind.promise())
	}
	var queueWords func(queue.Happened, string) string
	if words != nil {
		queueWords = func(h queue.Happened, said string) string { return words(sr.Scenario, Happened(h), said) }
	}
	said := queue.Said(sr.Scenario.words(crashLabel(sr)), queued(sr.Attempts), job1, sr.Scenario.Kind == AckLost, queueWords, sr.followUps)
	return report.Headline(promises, len(f.Database) > 0 || len(f.Effects) > 0, said)
}

// crashLabel is the label of the point the scenario's fault hit: the point a
// crash refused, or the effect point whose apply or reply it struck.
func crashLabel(sr *ScenarioRun) string {
	var attempts []report.Attempt
	for _, a := range sr.Attempts {
		attempts = append(attempts, report.Attempt{Points: a.Points, CrashAt: a.CrashAt, Crashed: a.Crashed})
	}
	return report.CrashLabel(attempts, sr.Scenario.Point)
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

func indent(s, prefix string) string { return report.Indent(s, prefix) }
