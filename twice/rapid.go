package twice

import (
	"strings"

	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/generators"
)

// Property-based checks.
//
// When AssertIdempotent or ExpectIdempotent get a *rapid.T, the check draws
// the scenarios it runs from it, after the reference run has shown how many
// points the job has: a labelled draw "twice scenarios" of up to
// the budget's RapidScenarios distinct scenarios of the plan (sequential, crash@1..n,
// crash@end, duplicate-enqueue, ...), shrinking toward fewer and earlier ones.
// So rapid shrinks the job's input and the schedule together, to the smallest
// input and the earliest scenario that still fail, and saves the failing case
// in a fail file (testdata/rapid/<Test>/...) that every later `go test`
// replays first.
//
// Under rapid the failure text is a deterministic function of the draws (rapid
// only accepts a shrink step whose failure replays identically), and its
// replay line names rapid's seed instead of the scenario alone:
//
//	replay: go test ./pkg -run '^TestX$' -rapid.seed=N (N as rapid's "To reproduce" line says; ...)
//
// A failing check under rapid does not keep its database: rapid replays many
// failing cases while it shrinks. Replay the shrunk case with TWICE_KEEP_DB=1
// to keep one.

// rapidOptions returns the options that make a check inside rapid.Check
// draw its scenarios from rt; none when tb is not a *rapid.T.
func rapidOptions(tb TB) []Option {
	rt, ok := tb.(*rapid.T)
	if !ok {
		return nil
	}
	return []Option{optionFunc(func(c *config) {
		c.pick = func(all []Scenario, b Budget) []Scenario { return drawScenarios(rt, all, b) }
	})}
}

// drawScenarios draws the scenarios of one rapid check out of all.
func drawScenarios(rt *rapid.T, all []Scenario, b Budget) []Scenario {
	max := b.RapidScenarios
	if len(all) == 0 || max == 0 {
		return all
	}
	idx := generators.Subset(len(all), max).Draw(rt, "twice scenarios")
	picked := make([]Scenario, len(idx))
	tokens := make([]string, len(idx))
	for i, j := range idx {
		picked[i] = all[j]
		tokens[i] = all[j].Token()
	}
	rt.Logf("twice: drew %s of the %d planned scenarios", strings.Join(tokens, ", "), len(all))
	return picked
}

// failureText is the report as a test failure prints it; under rapid its
// replay line names rapid's seed and keeps the scenario's token.
func failureText(tb TB, rep *Report) string {
	text := rep.String()
	if _, ok := tb.(*rapid.T); !ok || rep.Err != nil || len(rep.Findings) == 0 {
		return text
	}
	tok := rep.Findings[0].Token
	old := "\nreplay: " + replayLine(rep.testName, tok) + "\n"
	text = strings.Replace(text+"\n", old, "\nreplay: "+rapidReplayLine(rep.testName, tok)+"\n", 1)
	return strings.TrimSuffix(text, "\n")
}

// rapidReplayLine is the replay line of a failure under rapid. The seed is
// not known inside the property (and must not be printed there: the text
// has to be the same for every replay of the same draws), so the line points
// at rapid's own "To reproduce" line for it.
func rapidReplayLine(testName, token string) string {
	cmd := replayLine(testName, token)
	if i := strings.Index(cmd, " -twice.run="); i >= 0 {
		cmd = cmd[:i]
	}
	return cmd + " -rapid.seed=N\n" +
		"  N is the seed on rapid's \"To reproduce\" line; with no flag, go test replays the shrunk case from\n" +
		"  the fail file rapid saved under testdata/rapid/ (commit it to keep it as a regression test).\n" +
		"  rapid drew scenario " + token + "; add -twice.run=" + token + " to run only it on the same inputs."
}
