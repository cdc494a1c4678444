package report

import (
	"context"
	"flag"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twicekit/twicekit/pgfixture"
)

// Publishing says where a finished check's report goes besides the test's
// log: a report directory, and GitHub Actions' annotations and step summary.
type Publishing struct {
	Dir     string    // -twice.report or TWICE_REPORT_DIR; "" writes no files
	Actions bool      // GITHUB_ACTIONS=true
	Summary string    // GITHUB_STEP_SUMMARY: the file the Markdown is appended to
	Root    string    // GITHUB_WORKSPACE: annotation paths are relative to it
	Stdout  io.Writer // where workflow commands (::error) go
	Verbose bool      // go test -v: a pass logs what it covered, and the binary which PostgreSQL it uses

	Names  *Names       // the file names taken in this run; nil: the binary's
	Failed *atomic.Bool // a report could not be written: set once, the first failure fails its test; nil: the binary's
}

// The binary's report names and whether one of its reports could not be
// written.
var (
	binaryReportNames = NewNames()
	binaryPublishFail atomic.Bool
)

// PublishingFromEnv is where the environment sends reports (TargetFromEnv
// of the report directory dir), with the binary's names and failure.
func PublishingFromEnv(dir string) Publishing {
	t := TargetFromEnv(dir)
	return Publishing{Dir: t.Dir, Actions: t.Actions, Summary: t.Summary, Root: t.Root, Stdout: t.Stdout,
		Verbose: Verbose(), Names: binaryReportNames, Failed: &binaryPublishFail}
}

// FailedFirst reports whether this is the first report of the binary that
// could not be written: that one fails its test, later ones are logged.
func (p Publishing) FailedFirst() bool {
	f := p.Failed
	if f == nil {
		f = &binaryPublishFail
	}
	return f.CompareAndSwap(false, true)
}

// Publish writes the report where p says (Target); file and line are the
// call site.
func (p Publishing) Publish(v Published, file string, line int) error {
	names := p.Names
	if names == nil {
		names = binaryReportNames
	}
	t := Target{Dir: p.Dir, Names: names, Actions: p.Actions, Summary: p.Summary, Root: p.Root, Stdout: p.Stdout}
	return t.Publish(v, file, line)
}

// Verbose reports whether go test runs with -v.
func Verbose() bool { return testing.Testing() && flag.Parsed() && testing.Verbose() }

var providerOnce sync.Once

// LogProviderOnce says, once per test binary under go test -v, which
// PostgreSQL the checks run on, and why the providers before it were not
// used.
func LogProviderOnce(logf func(format string, args ...any)) {
	providerOnce.Do(func() {
		srv, err := pgfixture.Shared(context.Background())
		if err != nil {
			return
		}
		logf("twice: PostgreSQL: %s", srv.Provenance())
	})
}
