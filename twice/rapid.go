package twice

import (
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/internal/scenarios"
)

// Property-based checks: when AssertIdempotent or ExpectIdempotent get a
// *rapid.T, the check draws the scenarios it runs from it, and its failure
// names rapid's seed (internal/scenarios' rapid.go says how).

// rapidOptions returns the options that make a check inside rapid.Check
// draw its scenarios from rt; none when tb is not a *rapid.T.
func rapidOptions(tb TB) []Option {
	rt, ok := tb.(*rapid.T)
	if !ok {
		return nil
	}
	return []Option{optionFunc(func(c *config) {
		c.pick = func(all []Scenario, b Budget) []Scenario { return scenarios.Draw(rt, all, b.RapidScenarios) }
	})}
}

// failureText is the report as a test failure prints it; under rapid its
// replay line names rapid's seed and keeps the scenario's token, and the
// failure rapid prints last says when its shrinking stopped at its time
// limit (started is when the check began; scenarios.FailureText).
func failureText(tb TB, rep *Report, started time.Time) string {
	rt, ok := tb.(*rapid.T)
	if !ok || rep.Err != nil || len(rep.Findings) == 0 {
		return rep.String()
	}
	tok := rep.Findings[0].Token
	return scenarios.FailureText(rt, rep.String(), replayLine(rep.testName, tok), tok, slices.Contains(rep.drawn, tok), started)
}
