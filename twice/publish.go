package twice

import (
	"flag"

	"github.com/twicekit/twicekit/internal/report"
)

var reportDirFlag = flag.String("twice.report", "", "write every check's JSON report (and a Markdown report of each failed one) into this `directory`; env TWICE_REPORT_DIR")

// publishing says where a finished check's report goes besides the test's
// log (internal/report).
type publishing = report.Publishing

func publishingFromEnv() publishing { return report.PublishingFromEnv(*reportDirFlag) }

// published is the report as internal/report publishes it.
func published(rep *Report) report.Published {
	v := report.Published{Test: rep.testName, Job: rep.Job, OK: rep.OK(), JSON: rep.JSON, Markdown: rep.Markdown,
		Headline: report.CouldNotRun(rep.Err)}
	if len(rep.Findings) > 0 {
		v.Headline = rep.Findings[0].Headline
		v.Replay = replayLine(rep.testName, rep.Findings[0].Token)
	}
	return v
}

// callSite is the first caller outside package twice (or in a test file):
// the test's line that asked for the check.
func callSite() (string, int) { return report.CallSite("github.com/twicekit/twicekit/twice.") }

// Coverage says what a check ran, by kind: the line a passing check logs
// under go test -v.
func (r *Report) Coverage() string {
	c := report.Coverage{Job: r.Job, Covered: r.coveredN, InterleavingsOff: r.concurrencyOff != "" || r.overlapsOff != "", Isolation: r.options.Isolation}
	c.Kinds = report.Map(r.Scenarios, func(s *ScenarioRun) string { return s.Scenario.Kind.String() })
	if r.Reference != nil && len(r.Reference.Attempts) > 0 {
		c.Reference, c.Points = true, len(concurrentPoints(r.Reference.Attempts[0].Points))
	}
	return c.Line()
}
