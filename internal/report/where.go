package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
)

// Target says where a finished check's report goes besides the test's
// log: a report directory, and GitHub Actions' annotations and step
// summary.
type Target struct {
	Dir     string    // "" writes no files
	Names   *Names    // the file names taken in this run
	Actions bool      // GITHUB_ACTIONS=true
	Summary string    // GITHUB_STEP_SUMMARY: the file the Markdown is appended to
	Root    string    // GITHUB_WORKSPACE: annotation paths are relative to it
	Stdout  io.Writer // where workflow commands (::error) go
}

// TargetFromEnv is where the environment sends reports: the report
// directory dir (-twice.report), else TWICE_REPORT_DIR, under this test
// binary's package (PackageReportDir); GitHub Actions' annotations and step
// summary when GITHUB_ACTIONS is true. Names is left for the caller.
func TargetFromEnv(dir string) Target {
	if dir == "" {
		dir = os.Getenv("TWICE_REPORT_DIR")
	}
	if dir != "" {
		dir = PackageReportDir(dir)
	}
	return Target{
		Dir:     dir,
		Actions: os.Getenv("GITHUB_ACTIONS") == "true",
		Summary: os.Getenv("GITHUB_STEP_SUMMARY"),
		Root:    os.Getenv("GITHUB_WORKSPACE"),
		Stdout:  os.Stdout,
	}
}

// Publish writes the report where t says: its JSON (every check) and its
// Markdown (failed checks) into the report directory; under GitHub Actions
// an ::error annotation at the test's call site and the Markdown appended
// to the step summary. file and line are the call site.
func (t Target) Publish(p Published, file string, line int) error {
	var errs []error
	if t.Dir != "" {
		errs = append(errs, WriteFiles(t.Dir, t.Names, p))
	}
	if t.Actions && !p.OK {
		errs = append(errs, Annotate(t.Stdout, t.Summary, t.Root, file, line, p))
	}
	return errors.Join(errs...)
}

// CallSite is the first caller outside the package whose functions start
// with prefix ("github.com/twicekit/twicekit/twice."), or in a test file:
// the test's line that asked for the check.
func CallSite(prefix string) (string, int) {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, prefix) || strings.HasSuffix(f.File, "_test.go") {
			return f.File, f.Line
		}
		if !more {
			return "", 0
		}
	}
}

// PackageReportDir is where this test binary's reports go under the report
// directory: a subdirectory named after the package's directory in its
// module ("examples/quickstart"). go test ./... runs one binary per
// package, so two packages never write the same file. A relative report
// directory is taken from the module's root (the workspace's root for a
// module of a go.work, see commandRoot), not from each package's
// directory, so that every package reports into one tree.
func PackageReportDir(dir string) string {
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

var (
	pkgOnce sync.Once
	pkgPath string
)

// packageArg is the test's package relative to where its go command is
// typed ("./x/y"): its workspace's root, else its module root (see
// commandRoot); "." when it cannot tell.
func packageArg() string {
	pkgOnce.Do(func() {
		pkgPath = "."
		wd, err := os.Getwd()
		if err != nil {
			return
		}
		if dir, ok := commandRoot(wd); ok {
			if rel, err := filepath.Rel(dir, wd); err == nil && rel != "." {
				pkgPath = "./" + filepath.ToSlash(rel)
			}
		}
	})
	return pkgPath
}

// ReplayLine is the one command that replays a scenario.
func ReplayLine(testName, token string) string {
	if testName == "" {
		return "TWICE_RUN=" + token + " (the scenario's token; or pass twice.Only(\"" + token + "\"))"
	}
	parts := strings.Split(testName, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return fmt.Sprintf("go test %s -run '%s' -twice.run=%s", packageArg(), strings.Join(parts, "/"), token)
}
