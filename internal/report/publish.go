package report

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/twicekit/twicekit/internal/reportfmt"
)

// Published is a finished check as publishing writes it.
type Published struct {
	// Test and Job name the check.
	Test, Job string
	// OK: the check ran and every scenario kept every promise.
	OK bool
	// JSON is the JSON report.
	JSON func() ([]byte, error)
	// Markdown is the Markdown report.
	Markdown func() string
	// Headline is the first finding's headline, or why the check could not
	// run.
	Headline string
	// Replay is the first finding's replay line; empty when none.
	Replay string
}

// CouldNotRun is a published headline of a check that could not run: err
// on one line.
func CouldNotRun(err error) string {
	text := ""
	if err != nil {
		text = err.Error()
	}
	return "the check could not run: " + strings.Join(strings.Fields(text), " ")
}

// WriteFiles writes a check's reports into dir under a name that names
// hands out: name.json for every check, name.md for a failed one. A check
// that passed removes an earlier run's name.md.
func WriteFiles(dir string, names *Names, p Published) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("twice: the report directory: %w", err)
	}
	base := filepath.Join(dir, names.Claim(dir, FileName(p.Test, p.Job)))
	js, err := p.JSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".json", js, 0o644); err != nil {
		return fmt.Errorf("twice: writing the JSON report: %w", err)
	}
	if p.OK {
		_ = os.Remove(base + ".md") // an earlier run's failure is no longer true
		return nil
	}
	if err := os.WriteFile(base+".md", []byte(p.Markdown()), 0o644); err != nil {
		return fmt.Errorf("twice: writing the Markdown report: %w", err)
	}
	return nil
}

// Names hands out report file names that no other check of the run has:
// the first check of a name gets it, the next ones get -2, -3, … in the
// order they finish. Names compare without case (macOS and Windows file
// systems do), and per directory.
type Names struct {
	mu    sync.Mutex
	taken map[string]bool // directory + "\x00" + lower-case name
}

// NewNames has no name taken.
func NewNames() *Names { return &Names{taken: map[string]bool{}} }

// Claim returns the name a check's files get in dir: want, or want with
// the first free suffix.
func (n *Names) Claim(dir, want string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	name := want
	for i := 2; n.taken[dir+"\x00"+strings.ToLower(name)]; i++ {
		name = fmt.Sprintf("%s-%d", want, i)
	}
	n.taken[dir+"\x00"+strings.ToLower(name)] = true
	return name
}

// MaxFileName bounds a report file's name (without ".json" and a Names
// suffix) well inside the 255 bytes most file systems allow.
const MaxFileName = 120

// FileName names a check's report files after its test and job (see Names
// for two checks of the same name). A name longer than MaxFileName keeps a
// readable prefix and ends in a hash of the whole name, so two long names
// that share their prefix stay apart.
func FileName(test, job string) string {
	if test == "" {
		test = "Check"
	}
	name := reportfmt.FileSafe(test) + "--" + reportfmt.FileSafe(job)
	if len(name) <= MaxFileName {
		return name
	}
	sum := sha256.Sum256([]byte(test + "\x00" + job))
	return name[:MaxFileName-13] + "-" + hex.EncodeToString(sum[:6])
}

// Annotate writes a GitHub Actions ::error workflow command for a failed
// check to w, at file and line (relative to root when it is under it), and
// appends the check's Markdown to the step summary (none when summary is
// empty).
func Annotate(w io.Writer, summary, root, file string, line int, p Published) error {
	replay := ""
	if p.Replay != "" {
		replay = "\nreplay: " + p.Replay
	}
	if root != "" {
		if rel, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(rel, "..") {
			file = filepath.ToSlash(rel)
		}
	}
	title := "twice: " + reportfmt.Name(p.Job)
	fmt.Fprintf(w, "::error file=%s,line=%d,title=%s::%s\n",
		reportfmt.WorkflowProperty(file), line, reportfmt.WorkflowProperty(title), reportfmt.WorkflowData(reportfmt.Text(p.Headline+replay)))
	if summary == "" {
		return nil
	}
	f, err := os.OpenFile(summary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("twice: GITHUB_STEP_SUMMARY: %w", err)
	}
	_, werr := io.WriteString(f, p.Markdown()+"\n")
	return errors.Join(werr, f.Close())
}
