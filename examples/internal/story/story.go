// Package story is what the examples share: a form of a story (a job, the
// options it is checked with, and what the check is expected to say about
// it), and the verdict that compares a report with that expectation.
package story

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twicekit/twicekit/twice"

	_ "pgregory.net/rapid" // registers -rapid.checks, which RapidChecks sets
)

// Form is one way of writing a story's job.
type Form struct {
	// Story and Name name the form as "story/name".
	Story, Name string
	// Job is the job under test.
	Job twice.Job
	// Options are what the form is checked with (policies, normalisation,
	// late redrives).
	Options []twice.Option
	// Flagged lists, in report order, the sequential scenarios expected to
	// break a promise. Empty: no sequential scenario may break one.
	Flagged []string
	// Race says only two attempts at once can catch the bug (or one more of
	// it): when the check runs concurrent scenarios, at least one of them
	// must break a promise.
	Race bool
	// Lesson says in one line what the form teaches.
	Lesson string
}

// Title is "story/name".
func (f Form) Title() string { return f.Story + "/" + f.Name }

// Broken reports whether the form is expected to be flagged.
func (f Form) Broken() bool { return len(f.Flagged) > 0 || f.Race }

// IsConcurrent tells the tokens of concurrent scenarios ("concurrent:…",
// "overlap@…") from those of sequential ones.
func IsConcurrent(token string) bool {
	return strings.HasPrefix(token, "concurrent:") || strings.HasPrefix(token, "overlap@") ||
		strings.HasPrefix(token, "duplicate-concurrent:") || strings.HasPrefix(token, "duplicate-overlap@")
}

// Sequential returns the tokens of the findings of sequential scenarios, in
// report order.
func Sequential(rep *twice.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		if !IsConcurrent(f.Token) {
			out = append(out, f.Token)
		}
	}
	return out
}

// Concurrent returns the tokens of the findings of concurrent scenarios.
func Concurrent(rep *twice.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		if IsConcurrent(f.Token) {
			out = append(out, f.Token)
		}
	}
	return out
}

// RanConcurrent reports whether the check ran any concurrent scenario.
func RanConcurrent(rep *twice.Report) bool {
	return slices.ContainsFunc(rep.Tokens(), IsConcurrent)
}

// Verdict compares a report with what the form expects. It returns whether
// the check said what was expected and a one-line verdict, for example
//
//	✓ loyalty/ledger: idempotent in 7 scenarios
//	✓ loyalty/increment: flagged as expected (sequential, crash@end, duplicate-enqueue, concurrent:AB)
//	✗ loyalty/ledger: unexpected: flagged by crash@2
func Verdict(f Form, rep *twice.Report) (bool, string) {
	ok, text := verdict(f, rep)
	mark := "✓"
	if !ok {
		mark = "✗"
	}
	return ok, fmt.Sprintf("%s %s: %s", mark, f.Title(), text)
}

func verdict(f Form, rep *twice.Report) (bool, string) {
	if rep.Err != nil {
		return false, "unexpected: the check could not run: " + firstLine(rep.Err.Error())
	}
	seq, conc, ranConc := Sequential(rep), Concurrent(rep), RanConcurrent(rep)
	if !f.Broken() {
		if len(rep.Findings) == 0 {
			return true, fmt.Sprintf("idempotent in %d scenarios", len(rep.Scenarios))
		}
		return false, "unexpected: flagged by " + listOrNone(append(seq, conc...))
	}
	if !slices.Equal(seq, f.Flagged) {
		return false, fmt.Sprintf("unexpected: flagged by %s, expected %s", listOrNone(seq), listOrNone(f.Flagged))
	}
	switch {
	case f.Race && ranConc && len(conc) == 0:
		return false, "unexpected: no concurrent scenario caught the race"
	case f.Race && !ranConc && len(seq) == 0:
		return true, "passes every sequential scenario, as expected: only two attempts at once catch this race (no concurrent scenarios in this build)"
	}
	return true, "flagged as expected (" + strings.Join(append(slices.Clone(seq), conc...), ", ") + ")"
}

func listOrNone(tokens []string) string {
	if len(tokens) == 0 {
		return "nothing"
	}
	return strings.Join(tokens, ", ")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Find returns the finding of the scenario with this token, or nil.
func Find(rep *twice.Report, token string) *twice.Finding {
	for i := range rep.Findings {
		if rep.Findings[i].Token == token {
			return &rep.Findings[i]
		}
	}
	return nil
}

// Tables lists the tables whose rows differ in a finding.
func Tables(f *twice.Finding) []string {
	var out []string
	for _, d := range f.Database {
		out = append(out, d.Table)
	}
	return out
}

// Mismatches renders a finding's effect mismatches, as the report prints them.
func Mismatches(f *twice.Finding) []string {
	var out []string
	for _, m := range f.Effects {
		out = append(out, m.String())
	}
	return out
}

// RapidChecks makes rapid draw n inputs per property unless -rapid.checks
// was given: every input of the examples' properties is a whole check
// against PostgreSQL, so rapid's default of 100 would take minutes. Call it
// in TestMain before m.Run.
func RapidChecks(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if !set && flag.Lookup("rapid.checks") != nil {
		_ = flag.Set("rapid.checks", strconv.Itoa(n))
	}
}
