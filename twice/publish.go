package twice

import (
	"context"
	"flag"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/internal/reportfmt"
	"github.com/twicekit/twicekit/pgfixture"
)

var reportDirFlag = flag.String("twice.report", "", "write every check's JSON report (and a Markdown report of each failed one) into this `directory`; env TWICE_REPORT_DIR")

// publishing says where a finished check's report goes besides the test's
// log: a report directory, and GitHub Actions' annotations and step summary.
type publishing struct {
	dir     string    // -twice.report or TWICE_REPORT_DIR; "" writes no files
	actions bool      // GITHUB_ACTIONS=true
	summary string    // GITHUB_STEP_SUMMARY: the file the Markdown is appended to
	root    string    // GITHUB_WORKSPACE: annotation paths are relative to it
	stdout  io.Writer // where workflow commands (::error) go
	verbose bool      // go test -v: a pass logs what it covered, and the binary which PostgreSQL it uses

	names  *report.Names // the file names taken in this run; nil: the binary's
	failed *atomic.Bool  // a report could not be written: set once, the first failure fails its test; nil: the binary's
}

// The binary's report names and whether one of its reports could not be
// written.
var (
	binaryReportNames = report.NewNames()
	binaryPublishFail atomic.Bool
)

func publishingFromEnv() publishing {
	t := report.TargetFromEnv(*reportDirFlag)
	return publishing{dir: t.Dir, actions: t.Actions, summary: t.Summary, root: t.Root, stdout: t.Stdout,
		verbose: verbose(), names: binaryReportNames, failed: &binaryPublishFail}
}

// failedFirst reports whether this is the first report of the binary that
// could not be written: that one fails its test, later ones are logged.
func (p publishing) failedFirst() bool {
	f := p.failed
	if f == nil {
		f = &binaryPublishFail
	}
	return f.CompareAndSwap(false, true)
}

// publish writes the report where p says (report.Target); file and line
// are the call site.
func (p publishing) publish(rep *Report, file string, line int) error {
	names := p.names
	if names == nil {
		names = binaryReportNames
	}
	t := report.Target{Dir: p.dir, Names: names, Actions: p.actions, Summary: p.summary, Root: p.root, Stdout: p.stdout}
	return t.Publish(published(rep), file, line)
}

// published is the report as internal/report publishes it.
func published(rep *Report) report.Published {
	v := report.Published{Test: rep.testName, Job: rep.Job, OK: rep.OK(), JSON: rep.JSON, Markdown: rep.Markdown,
		Headline: "the check could not run: " + oneLine(errText(rep.Err))}
	if len(rep.Findings) > 0 {
		v.Headline = rep.Findings[0].Headline
		v.Replay = replayLine(rep.testName, rep.Findings[0].Token)
	}
	return v
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// callSite is the first caller outside package twice (or in a test file):
// the test's line that asked for the check.
func callSite() (string, int) { return report.CallSite("github.com/twicekit/twicekit/twice.") }

// Coverage says what a check ran, by kind: the line a passing check logs
// under go test -v.
func (r *Report) Coverage() string {
	c := report.Coverage{Job: r.Job, Covered: r.coveredN, InterleavingsOff: r.concurrencyOff != "" || r.overlapsOff != "", Isolation: r.options.Isolation}
	for _, s := range r.Scenarios {
		c.Kinds = append(c.Kinds, s.Scenario.Kind.String())
	}
	if r.Reference != nil && len(r.Reference.Attempts) > 0 {
		c.Reference, c.Points = true, len(concurrentPoints(r.Reference.Attempts[0].Points))
	}
	return c.Line()
}

func countText(n int64) string { return reportfmt.CountText(n) }

// verbose reports whether go test runs with -v.
func verbose() bool { return testing.Testing() && flag.Parsed() && testing.Verbose() }

var providerOnce sync.Once

// logProviderOnce says, once per test binary under go test -v, which
// PostgreSQL the checks run on, and why the providers before it were not
// used.
func logProviderOnce(tb TB) {
	providerOnce.Do(func() {
		srv, err := pgfixture.Shared(context.Background())
		if err != nil {
			return
		}
		tb.Logf("twice: PostgreSQL: %s", srv.Provenance())
	})
}

// packageReportDir is where this test binary's reports go under the report
// directory (report.PackageReportDir).
func packageReportDir(dir string) string { return report.PackageReportDir(dir) }
