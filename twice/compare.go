package twice

import (
	"fmt"
	"strings"
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
	want, got := d.Want, d.Got
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
	f.Hints = effects.Diagnose(want.Effects(), got.Effects(), got.Rejected(sr.Rejected)...)
	for _, m := range f.Effects {
		f.Hints = append(f.Hints, effects.Explain(m))
	}
	f.Hints = append(f.Hints, sh.TimeHints(want, f.Database)...)
	f.Hints = append(f.Hints, compare.DeliveryRecordHints(f.Database)...) // internal/compare/deliveryrecord.go
	f.Hints = append(f.Hints, compare.JSONHints(want, f.Database)...)
	f.Hints = append(f.Hints, compare.KeyHints(want, got, f.Database, f.Effects)...)
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
			Text: fmt.Sprintf("the job never finished on a clean run: it snoozed on every one of its %s (the last time: %v)\n(the reference run must end once before twice can compare anything with it)", count(len(ref.Attempts), "delivery"), first.Err)})
	case first.Err != nil && !first.Terminal && len(ref.Foreign) == 0:
		f.Problems = append(f.Problems, Problem{Kind: ProblemCleanRunFailed, Attempt: attemptName(first),
			Text: fmt.Sprintf("the job failed on a clean run: %v%s\n(the reference run must succeed once before twice can compare anything with it)", first.Err, typeHint(first.Err))})
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
	add := func(p string) {
		for _, q := range promises {
			if q == p {
				return
			}
		}
		promises = append(promises, p)
	}
	for _, p := range f.Problems {
		add(p.Kind.promise())
	}
	if len(f.Database) > 0 || len(f.Effects) > 0 {
		add("not idempotent")
	}
	var queueWords func(queue.Happened, string) string
	if words != nil {
		queueWords = func(h queue.Happened, said string) string { return words(sr.Scenario, Happened(h), said) }
	}
	said := queue.Said(sr.Scenario.words(crashLabel(sr)), queued(sr.Attempts), job1, sr.Scenario.Kind == AckLost, queueWords, sr.followUps)
	return strings.Join(promises, "; ") + ": " + said
}

// crashLabel is the label of the point the scenario's fault hit: the point a
// crash refused, or the effect point whose apply or reply it struck.
func crashLabel(sr *ScenarioRun) string {
	for _, a := range sr.Attempts {
		if a.Crashed && a.CrashAt.Index > 0 {
			return a.CrashAt.Label
		}
	}
	if p := sr.Scenario.Point; p > 0 {
		for _, a := range sr.Attempts { // numbered across the deliveries that snoozed
			for _, st := range a.Points {
				if st.Index == p {
					return st.Label
				}
			}
		}
	}
	return ""
}

func attemptName(a AttemptRecord) string {
	return fmt.Sprintf("attempt %d of %s", a.Number, a.JobID)
}

func hungProblem(a AttemptRecord, timeout time.Duration) Problem {
	where := "before its first point"
	if n := len(a.Points); n > 0 {
		where = fmt.Sprintf("after point %d (%s)", n, a.Points[n-1].Label)
	}
	bound := "AttemptTimeout"
	if timeout > 0 {
		bound = fmt.Sprintf("AttemptTimeout (%s)", timeout)
	}
	if a.Slow && a.LockHolder != "" {
		return lockWaitProblem(a, bound)
	}
	if a.Slow {
		n := len(a.Points)
		s := fmt.Sprintf("%s was still running a statement in PostgreSQL after %s: point %d (%s); it is slow, not hung. "+
			"If the job takes this long in production, give it more time with twice.AttemptTimeout(d) (every scenario plays with that bound; "+
			"twice.WallBudget bounds the whole check); its connections were cut and its context cancelled",
			attemptName(a), bound, n, a.Points[n-1].Label)
		return Problem{Kind: ProblemSlow, Attempt: attemptName(a), Text: s}
	}
	s := fmt.Sprintf("%s hung %s", attemptName(a), where)
	if timeout > 0 {
		s += fmt.Sprintf(": still running after %s (AttemptTimeout)", timeout)
	}
	s += ", with no statement running in PostgreSQL: it waited outside its handles (a channel, a mutex, time.Sleep, a network call); " +
		"if it is only slow there, give it more time with twice.AttemptTimeout(d); its connections were cut and its context cancelled"
	if a.Leaked {
		s += ", and it still did not return: it waits on something other than its context (a channel, a mutex, time.Sleep)"
	}
	return Problem{Kind: ProblemHung, Attempt: attemptName(a), Text: s}
}

func foreignProblem(labels []string) Problem {
	var b strings.Builder
	b.WriteString("the job used a context that is not the attempt's; these calls were refused:")
	for _, l := range labels {
		b.WriteString("\n    " + l)
	}
	b.WriteString("\n  a call on the attempt's handles is the attempt's only while it runs: make every call before Run returns (wait for the goroutines it starts)")
	return Problem{Kind: ProblemForeignContext, Text: b.String()}
}

func indent(s, prefix string) string { return report.Indent(s, prefix) }
