package twice

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twicekit/twicekit/concurrent"
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
	dir := *reportDirFlag
	if dir == "" {
		dir = os.Getenv("TWICE_REPORT_DIR")
	}
	if dir != "" {
		dir = packageReportDir(dir)
	}
	return publishing{
		dir:     dir,
		actions: os.Getenv("GITHUB_ACTIONS") == "true",
		summary: os.Getenv("GITHUB_STEP_SUMMARY"),
		root:    os.Getenv("GITHUB_WORKSPACE"),
		stdout:  os.Stdout,
		verbose: verbose(),
		names:   binaryReportNames,
		failed:  &binaryPublishFail,
	}
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

// publish writes the report where p says: rep.json (every check) and
// rep.md (failed checks) into the report directory; under GitHub Actions
// an ::error annotation at the test's call site and the Markdown appended
// to the step summary. file and line are the call site.
func (p publishing) publish(rep *Report, file string, line int) error {
	var errs []error
	if p.dir != "" {
		errs = append(errs, p.writeFiles(rep))
	}
	if p.actions && !rep.OK() {
		errs = append(errs, p.annotate(rep, file, line))
	}
	return errors.Join(errs...)
}

func (p publishing) writeFiles(rep *Report) error {
	names := p.names
	if names == nil {
		names = binaryReportNames
	}
	return report.WriteFiles(p.dir, names, published(rep))
}

func (p publishing) annotate(rep *Report, file string, line int) error {
	return report.Annotate(p.stdout, p.summary, p.root, file, line, published(rep))
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
func callSite() (string, int) {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "github.com/twicekit/twicekit/twice.") || strings.HasSuffix(f.File, "_test.go") {
			return f.File, f.Line
		}
		if !more {
			return "", 0
		}
	}
}

// Coverage says what a check ran, by kind: the line a passing check logs
// under go test -v.
func (r *Report) Coverage() string {
	counts := map[string]int{}
	interleavings := 0
	for _, s := range r.Scenarios {
		switch s.Scenario.Kind {
		case AckLost:
			counts["ack lost"]++
		case CrashBefore, CrashAfterLast:
			counts["crashes"]++
		case DuplicateEnqueue, DuplicateOverlap, DuplicateInterleaved:
			counts["duplicate enqueue"]++
		case CrashAfterApply, ReplyLost, Redrive:
			counts["effect faults"]++
		case StatementReplyLost:
			counts["statement replies lost"]++
		case Interleaved, Overlap:
			interleavings++
		}
	}
	var parts []string
	for _, k := range []string{"ack lost", "crashes", "duplicate enqueue", "effect faults", "statement replies lost"} {
		if k == "statement replies lost" && counts[k] == 0 {
			continue // played under the thorough budget or with LoseStatementReplies
		}
		s := fmt.Sprintf("%s %d", k, counts[k])
		if k == "crashes" && r.coveredN > 0 {
			s += fmt.Sprintf(" (+%d covered)", r.coveredN)
		}
		parts = append(parts, s)
	}
	switch {
	case r.concurrencyOff != "" || r.overlapsOff != "":
		parts = append(parts, "interleavings not checked")
	case r.Reference != nil && len(r.Reference.Attempts) > 0:
		n := len(concurrentPoints(r.Reference.Attempts[0].Points)) // the first deliveries interleave
		parts = append(parts, fmt.Sprintf("interleavings %d of %s (%s)", interleavings, countText(concurrent.Interleavings(n, n)), r.options.Isolation))
	}
	return fmt.Sprintf("twice: %s: idempotent in %s: %s", reportfmt.Name(r.Job), count(len(r.Scenarios), "scenario"), strings.Join(parts, ", "))
}

func countText(n int64) string {
	if n >= 1_000_000_000 {
		return "more than a billion"
	}
	return fmt.Sprint(n)
}

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
// directory: a subdirectory named after the package's directory in its
// module ("examples/quickstart"). go test ./... runs one binary per
// package, so two packages never write the same file. A relative report
// directory is taken from the module's root (the workspace's root for a
// module of a go.work, see commandRoot), not from each package's
// directory, so that every package reports into one tree.
func packageReportDir(dir string) string {
	cwd, err := os.Getwd()
	if err != nil {
		return dir
	}
	root := cwd
	if d, ok := commandRoot(cwd); ok {
		root = d
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	rel, err := filepath.Rel(root, cwd)
	if err != nil {
		return dir
	}
	return filepath.Join(dir, rel)
}
