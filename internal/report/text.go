package report

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/internal/reportfmt"
	"github.com/twicekit/twicekit/pgfixture"
)

// Finished is a finished check as its text and Markdown reports show it.
type Finished struct {
	// Job is the job's name.
	Job string
	// Err says why the check could not run; empty when it ran.
	Err string
	// Failed: the check could not run (Err says why).
	Failed bool
	// Tokens are the scenarios that ran, in order.
	Tokens []string
	// Findings are the scenarios that broke a promise, in order.
	Findings []Finding
	// NotChecked is what the check left out and why, a line each, every
	// line starting with a newline.
	NotChecked string
}

// Finding is one scenario that broke a promise, as a report shows it.
type Finding struct {
	Headline string
	Token    string
	// Kind is the scenario's kind, as the JSON report names it.
	Kind string
	// Timeline is the scenario's text timeline.
	Timeline string
	// Problems are the problems' texts.
	Problems []string
	// Database lists the tables whose rows differ from the reference run.
	Database []pgfixture.TableDiff
	// Effects are the texts of the effects whose counts break their
	// policy.
	Effects []string
	// Mismatches are the same effects as the JSON report lists them.
	Mismatches []JSONMismatch
	Hints      []string
	// Replay is the one command that replays the scenario.
	Replay string
	// Run is what the timeline shows, for the Mermaid diagram; nil when
	// the finding has no run.
	Run *Run
}

// Text is the report as a test failure prints it: the first finding in
// full, the others by headline with their replay tokens. Its control
// characters are not escaped yet (reportfmt.Text does).
func Text(r Finished) string {
	if r.Failed {
		return r.Err
	}
	if len(r.Findings) == 0 {
		s := fmt.Sprintf("twice: %s: idempotent in %s (%s)", reportfmt.Name(r.Job), scenarios(len(r.Tokens)), strings.Join(r.Tokens, ", "))
		return s + r.NotChecked
	}
	var b strings.Builder
	total := len(r.Tokens)
	if total == 0 {
		total = 1
	}
	fmt.Fprintf(&b, "twice: %s: %d of %d scenarios broke a promise\n\n", reportfmt.Name(r.Job), len(r.Findings), total)
	f := r.Findings[0]
	b.WriteString(f.Headline + "\n")
	if f.Timeline != "" {
		b.WriteString("\n" + f.Timeline)
	}
	for _, p := range f.Problems {
		b.WriteString("\n" + p + "\n")
	}
	if len(f.Database) > 0 {
		b.WriteString("\ndatabase (- want, + got):\n")
		b.WriteString(Indent(strings.TrimRight(pgfixture.FormatDiff(f.Database), "\n"), "  ") + "\n")
	}
	if len(f.Effects) > 0 {
		b.WriteString("\neffects (want is one clean run):\n")
		for _, m := range f.Effects {
			b.WriteString("  " + m + "\n")
		}
	}
	if len(f.Hints) > 0 {
		b.WriteString("\nwhy:\n")
		for _, h := range f.Hints {
			b.WriteString("  " + h + "\n")
		}
	}
	b.WriteString("\nreplay: " + f.Replay + "\n")
	if len(r.Findings) > 1 {
		b.WriteString("\nalso broken:\n")
		for _, g := range r.Findings[1:] {
			fmt.Fprintf(&b, "  %s [-twice.run=%s]\n", g.Headline, g.Token)
		}
	}
	b.WriteString(r.NotChecked)
	return strings.TrimRight(b.String(), "\n")
}

// Markdown is the report for a reader and for GitHub: the text report in a
// fenced block, then each finding's replay line and its Mermaid diagram.
// Its control characters are not escaped yet (reportfmt.Text does).
func Markdown(r Finished) string {
	var b strings.Builder
	text := reportfmt.Text(Text(r))
	head, _, _ := strings.Cut(text, "\n")
	fmt.Fprintf(&b, "## %s\n\n```text\n%s\n```\n", head, text)
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n### %s\n\n", f.Headline)
		fmt.Fprintf(&b, "Replay: `%s`\n", f.Replay)
		if f.Run != nil {
			fmt.Fprintf(&b, "\n```mermaid\n%s```\n", Mermaid(*f.Run))
		}
	}
	return b.String()
}

// scenarios says n scenarios, the noun agreeing.
func scenarios(n int) string {
	if n == 1 {
		return "1 scenario"
	}
	return fmt.Sprintf("%d scenarios", n)
}
