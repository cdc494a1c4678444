package twice

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/report"
)

// recordTB records what an assertion did, errors and fatals apart.
type recordTB struct {
	name                 string
	logs, errors, fatals []string
}

func (r *recordTB) Helper()      {}
func (r *recordTB) Name() string { return r.name }
func (r *recordTB) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recordTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordTB) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// TestTwoChecksOfOneNameWriteTwoReports: a table-driven test that checks
// the same job name twice (a broken version, then the fixed one) writes
// two JSON reports, in the order the checks ran, and the Markdown of the
// failed one; names that only clash once sanitized get a suffix too.
func TestTwoChecksOfOneNameWriteTwoReports(t *testing.T) {
	t.Parallel()
	fixed := counterJob
	fixed.Run = func(ctx context.Context, a *Attempt) error {
		_, err := a.Pool.Exec(ctx, `UPDATE counters SET n = 1 WHERE id = 1`)
		return err
	}
	dir := t.TempDir()
	pub := publishing{Dir: dir, Stdout: io.Discard, Names: report.NewNames(), Failed: &atomic.Bool{}}
	tb := &recordTB{name: "TestCounter"}
	for _, tc := range []struct {
		job  Job
		pass bool
	}{
		{counterJob, false},
		{fixed, true},
	} {
		require.Equal(t, tc.pass, assertWatched(tb, tb.Errorf, tc.job, []Option{Only("sequential")}, defaultWatch, pub))
	}
	require.Len(t, tb.errors, 1, "the broken check fails the test")
	require.Equal(t, []string{"TestCounter--increment-2.json", "TestCounter--increment.json", "TestCounter--increment.md"}, files(t, dir))
	first, err := os.ReadFile(filepath.Join(dir, "TestCounter--increment.json"))
	require.NoError(t, err)
	require.Contains(t, string(first), `"verdict": "broken"`)
	second, err := os.ReadFile(filepath.Join(dir, "TestCounter--increment-2.json"))
	require.NoError(t, err)
	require.Contains(t, string(second), `"verdict": "idempotent"`)

	slash, underscore := fixed, fixed
	slash.Name, underscore.Name = "billing/reward", "billing_reward"
	for _, job := range []Job{slash, underscore} {
		require.True(t, assertWatched(tb, tb.Errorf, job, []Option{Only("sequential")}, defaultWatch, pub))
	}
	require.Equal(t, []string{"TestCounter--billing_reward-2.json", "TestCounter--billing_reward.json",
		"TestCounter--increment-2.json", "TestCounter--increment.json", "TestCounter--increment.md"}, files(t, dir))
}

func TestReportNamesNeverCollide(t *testing.T) {
	t.Parallel()
	n := report.NewNames()
	require.Equal(t, "T--a", n.Claim("d", "T--a"))
	require.Equal(t, "T--a-2", n.Claim("d", "T--a"))
	require.Equal(t, "T--A-3", n.Claim("d", "T--A"), "names differ by case only on case-sensitive file systems")
	require.Equal(t, "T--a-2-2", n.Claim("d", "T--a-2"))
	require.Equal(t, "T--a", n.Claim("other", "T--a"), "another directory")
}

// TestAnUnwritableReportDirectoryFailsAPassingTest: a report directory that
// is a file fails the test that could not write its report, with the
// reason and what to do, once per binary: the next one only logs it.
func TestAnUnwritableReportDirectoryFailsAPassingTest(t *testing.T) {
	t.Parallel()
	fixed := counterJob
	fixed.Run = func(ctx context.Context, a *Attempt) error {
		_, err := a.Pool.Exec(ctx, `UPDATE counters SET n = 1 WHERE id = 1`)
		return err
	}
	notADir := filepath.Join(t.TempDir(), "reports")
	require.NoError(t, os.WriteFile(notADir, []byte("a file"), 0o644))
	pub := publishing{Dir: notADir, Stdout: io.Discard, Names: report.NewNames(), Failed: &atomic.Bool{}}

	tb := &recordTB{name: "TestCounter"}
	require.True(t, assertWatched(tb, tb.Errorf, fixed, []Option{Only("sequential")}, defaultWatch, pub), "the job kept its promises")
	require.Equal(t, []string{"twice: the report directory: mkdir " + notADir + ": not a directory\n" +
		"(twice could not publish this check's report, so CI would upload nothing of it: make -twice.report / TWICE_REPORT_DIR a directory the test can write, or unset it; later reports that cannot be written are logged only)"}, tb.errors)
	require.Empty(t, tb.fatals)

	next := &recordTB{name: "TestCounter"}
	require.True(t, assertWatched(next, next.Errorf, fixed, []Option{Only("sequential")}, defaultWatch, pub))
	require.Empty(t, next.errors)
	require.Equal(t, []string{"twice: the report directory: mkdir " + notADir + ": not a directory"}, next.logs)
}

// Each package's reports go under the report directory in a subdirectory
// named after the package's place in its module, and a relative report
// directory is taken from the module's root: go test ./... fills one tree,
// and two packages never write the same file.
func TestReportsGoUnderThePackagesDirectory(t *testing.T) {
	cwd, err := os.Getwd()
	require.NoError(t, err)
	root := filepath.Dir(cwd) // this package is twice/, at the module's root
	require.FileExists(t, filepath.Join(root, "go.mod"))
	require.Equal(t, filepath.Join(root, "out", "twice"), report.PackageReportDir("out"))
	require.Equal(t, filepath.Join("/var/reports", "twice"), report.PackageReportDir("/var/reports"))
}

// TestALongJobNamePassesUnderTheReportDirectory: a passing job with a
// 300-character name passes under TWICE_REPORT_DIR; its report file keeps a
// readable prefix and ends in a hash of the whole name, within the file
// system's bound, and two long names that share their prefix stay apart.
func TestALongJobNamePassesUnderTheReportDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TWICE_REPORT_DIR", dir)
	pub := publishingFromEnv()
	pub.Stdout, pub.Names, pub.Failed = io.Discard, report.NewNames(), &atomic.Bool{}
	fixed := counterJob
	fixed.Run = func(ctx context.Context, a *Attempt) error {
		_, err := a.Pool.Exec(ctx, `UPDATE counters SET n = 1 WHERE id = 1`)
		return err
	}
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	for _, suffix := range []string{"x", "y"} {
		job := fixed
		job.Name = string(long[:299]) + suffix
		tb := &recordTB{name: "TestLongName"}
		require.True(t, assertWatched(tb, tb.Errorf, job, []Option{Only("sequential")}, defaultWatch, pub), "the job kept its promises")
		require.Empty(t, tb.errors)
		require.Empty(t, tb.fatals)
	}
	got := files(t, pub.Dir)
	require.Len(t, got, 2, "two long names that differ only at the end get two files")
	for _, name := range got {
		require.LessOrEqual(t, len(name), report.MaxFileName+len(".json"))
		require.Regexp(t, `^TestLongName--abcdefghij[a-z]+-[0-9a-f]{12}\.json$`, name)
	}
}

// TestControlCharactersAreEscapedInEveryReport: a job name and a job's
// error that carry control characters are printed escaped in the text, the
// Markdown and the annotation; the JSON keeps them as JSON escapes.
func TestControlCharactersAreEscapedInEveryReport(t *testing.T) {
	t.Parallel()
	job := counterJob
	job.Name = "evil\x1b[31m\nname\x07"
	job.Run = func(ctx context.Context, a *Attempt) error {
		if _, err := a.Pool.Exec(ctx, `UPDATE counters SET n = n + 1 WHERE id = 1`); err != nil {
			return err
		}
		if a.Number > 1 {
			return fmt.Errorf("bell\x07 and escape\x1b[2J")
		}
		return nil
	}
	var out bytesBuffer
	pub := publishing{Actions: true, Stdout: &out, Names: report.NewNames(), Failed: &atomic.Bool{}}
	tb := &recordTB{name: "TestEvil"}
	require.False(t, assertWatched(tb, tb.Errorf, job, []Option{Only("sequential")}, defaultWatch, pub), "the counter is incremented twice")
	rep := Check(context.Background(), job, Only("sequential"))
	require.False(t, rep.OK())
	for what, text := range map[string]string{"text": rep.String(), "markdown": rep.Markdown(), "annotation": out.String(), "test log": fmt.Sprint(tb.errors)} {
		require.NotContains(t, text, "\x1b", what)
		require.NotContains(t, text, "\x07", what)
		require.NotContains(t, text, "evil\x1b", what)
	}
	require.Contains(t, rep.String(), `twice: evil\u001b[31m\nname\u0007: `)
	js, err := rep.JSON()
	require.NoError(t, err)
	require.Contains(t, string(js), `"job": "evil\u001b[31m\nname\u0007"`)
}

type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
func (w *bytesBuffer) String() string              { return string(w.b) }
