package findings

import (
	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/compare"
	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/pgfixture"
)

// Finding is what a scenario broke, as twice's Finding holds it, and the
// run its timeline shows, for the JSON and Markdown reports.
type Finding struct {
	Headline string
	Timeline string
	Database []pgfixture.TableDiff
	Effects  []effects.Mismatch
	Problems []Problem
	Hints    []string
	Run      *Run
}

// Scenario is what a finding reads of a scenario's run.
type Scenario struct {
	// Run is what the finding draws.
	Run *Run
	// Compared is what the comparison reads: its rows and effects.
	Compared compare.Run
	// Rejected lists the requests the payment provider refused.
	Rejected []effects.Rejection
	// Problems lists what broke besides the rows and the effects, as twice
	// words it, in the finding's order.
	Problems []Problem
	// Hints are twice's own hints, after the diff's.
	Hints []string
	// Said says the scenario and what the queue did in it, in the queue's
	// words when it gave them (internal/queue's Said), given the label of
	// the point its fault hit; Point is the effect point it struck (0:
	// none).
	Said  func(label string) string
	Point int
}

// Reference is the reference run as a scenario is compared with it.
type Reference struct {
	Run      *Run
	Compared compare.Run
	// Varying is what differs between two clean runs
	// (internal/compare/varying.go); KeyCopies where the reference copies
	// generated keys (internal/compare/generatedkeys.go).
	Varying   *compare.Varying
	KeyCopies *compare.KeyCopies
}

// Config is what a check's options say of its findings.
type Config struct {
	Policies effects.Policies
	// Label is the queue's label for a point (QueueLabels); nil: none.
	Label func(string) string
	// Words says a headline in the runner's words.
	Words func(string) string
}

// Compare checks a scenario against the reference run; nil when it kept
// every promise. Values that differ between two clean runs compare by
// shape and print as placeholders (internal/compare).
func Compare(ref Reference, sr Scenario, cfg Config) *Finding {
	sh := ref.Varying
	d := compare.Runs(sh, ref.KeyCopies, ref.Compared, sr.Compared, cfg.Policies)
	got := d.Got
	f := &Finding{
		Database: d.Database,
		Effects:  d.Effects,
		Problems: sr.Problems,
	}
	if len(f.Database) == 0 && len(f.Effects) == 0 && len(f.Problems) == 0 {
		return nil
	}
	f.Hints = d.Hints(sh, sr.Rejected)
	f.Hints = append(f.Hints, sr.Hints...)
	keys := compare.NewKeyAliases(pointLabels(ref.Run), pointLabels(sr.Run))
	view := labelled(aliasKeys(keys, sr.Run), cfg.Label)
	if sh != nil {
		view = rewrite(view, got.Text, got.Text)
		f.Problems, f.Hints = rewriteProblems(f.Problems, got.Texts), got.Texts(f.Hints)
	}
	f.Problems, f.Hints = rewriteProblems(f.Problems, keys.Texts), keys.Texts(f.Hints)
	view = rewrite(view, compare.MarkLiterals, compare.MarkLiterals)
	f.Problems, f.Hints = rewriteProblems(f.Problems, compare.MarkLiteralsIn), compare.MarkLiteralsIn(f.Hints)
	f.Headline = cfg.Words(Headline(f, view, sr))
	f.Timeline = report.Timeline(view.Draw())
	f.Run = view
	numberPlaceholders(f)
	return f
}

// ReferenceFinding reports a job that cannot even run once cleanly, or
// whose clean run the check could not see (sr.Problems say which); nil
// when it has no problem.
func ReferenceFinding(sr Scenario, label func(string) string) *Finding {
	if len(sr.Problems) == 0 {
		return nil
	}
	f := &Finding{Problems: sr.Problems}
	view := rewrite(labelled(sr.Run, label), compare.MarkLiterals, compare.MarkLiterals)
	f.Problems = rewriteProblems(f.Problems, compare.MarkLiteralsIn)
	f.Headline = Headline(f, view, sr)
	f.Timeline = report.Timeline(view.Draw())
	f.Run = view
	numberPlaceholders(f)
	return f
}

// Headline names the broken promises and the scenario, in the queue's own
// words when QueueWords gave them; view is the run as the finding shows it.
func Headline(f *Finding, view *Run, sr Scenario) string {
	var promises []string
	for _, p := range f.Problems {
		promises = append(promises, report.ProblemPromise(p.Kind))
	}
	return report.Headline(promises, len(f.Database) > 0 || len(f.Effects) > 0, sr.Said(crashLabel(view, sr.Point)))
}
