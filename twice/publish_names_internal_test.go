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
	pub := publishing{dir: dir, stdout: io.Discard, names: &reportNames{taken: map[string]bool{}}, failed: &atomic.Bool{}}
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
	n := &reportNames{taken: map[string]bool{}}
	require.Equal(t, "T--a", n.claim("d", "T--a"))
	require.Equal(t, "T--a-2", n.claim("d", "T--a"))
	require.Equal(t, "T--A-3", n.claim("d", "T--A"), "names differ by case only on case-sensitive file systems")
	require.Equal(t, "T--a-2-2", n.claim("d", "T--a-2"))
	require.Equal(t, "T--a", n.claim("other", "T--a"), "another directory")
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
	pub := publishing{dir: notADir, stdout: io.Discard, names: &reportNames{taken: map[string]bool{}}, failed: &atomic.Bool{}}

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
	require.Equal(t, filepath.Join(root, "out", "twice"), packageReportDir("out"))
	require.Equal(t, filepath.Join("/var/reports", "twice"), packageReportDir("/var/reports"))
}
