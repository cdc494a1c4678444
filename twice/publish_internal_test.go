package twice

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/pgfixture"
)

var counterJob = Job{
	Name:   "increment",
	Schema: pgfixture.SQL(`CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL)`),
	Seed:   SeedSQL(`INSERT INTO counters VALUES (1, 0)`),
	Run: func(ctx context.Context, a *Attempt) error {
		_, err := a.Pool.Exec(ctx, `UPDATE counters SET n = n + 1 WHERE id = 1`)
		return err
	},
}

// TestPublishUnderGitHubActions: with GITHUB_ACTIONS=true a failed check
// becomes an ::error annotation at the test's line (relative to the
// workspace) with the headline and the replay line, and its Markdown is
// appended to the step summary; a report directory gets the JSON of every
// check and the Markdown of failed ones; without Actions nothing is
// printed.
func TestPublishUnderGitHubActions(t *testing.T) {
	t.Parallel()
	rep := Check(context.Background(), counterJob, Only("sequential"), TestName("TestCounter"))
	require.False(t, rep.OK())
	wd, err := os.Getwd()
	require.NoError(t, err)
	dir := t.TempDir()
	summary := filepath.Join(dir, "summary.md")
	var out bytes.Buffer
	pub := publishing{Dir: filepath.Join(dir, "reports"), Actions: true, Summary: summary, Root: filepath.Dir(wd), Stdout: &out}
	file, line := callSite()
	require.NoError(t, pub.Publish(published(rep), file, line))

	require.Equal(t, "::error file=twice/publish_internal_test.go,line="+strconv.Itoa(line)+",title=twice%3A increment::"+
		"not idempotent: sequential: the ack was lost and the same job was delivered again%0A"+
		"replay: go test ./twice -run '^TestCounter$' -twice.run=sequential\n", out.String())
	got, err := os.ReadFile(summary)
	require.NoError(t, err)
	require.Equal(t, rep.Markdown()+"\n", string(got))

	js, err := os.ReadFile(filepath.Join(dir, "reports", "TestCounter--increment.json"))
	require.NoError(t, err)
	want, err := rep.JSON()
	require.NoError(t, err)
	require.Equal(t, string(want), string(js))
	md, err := os.ReadFile(filepath.Join(dir, "reports", "TestCounter--increment.md"))
	require.NoError(t, err)
	require.Equal(t, rep.Markdown(), string(md))

	// Outside Actions: files only, no annotation, no summary.
	out.Reset()
	quiet := publishing{Stdout: &out, Summary: filepath.Join(dir, "other.md")}
	require.NoError(t, quiet.Publish(published(rep), file, line))
	require.Empty(t, out.String())
	require.NoFileExists(t, filepath.Join(dir, "other.md"))

	// A later run (a new binary) where the check passes under Actions: no
	// annotation; its JSON only, and the failure's Markdown removed.
	pub.Names = report.NewNames()
	fixed := counterJob
	fixed.Run = func(ctx context.Context, a *Attempt) error {
		_, err := a.Pool.Exec(ctx, `UPDATE counters SET n = 1 WHERE id = 1`)
		return err
	}
	ok := Check(context.Background(), fixed, Only("sequential"), TestName("TestCounter"))
	require.True(t, ok.OK(), ok.String())
	require.NoError(t, pub.Publish(published(ok), file, line))
	require.Equal(t, "", out.String())
	require.FileExists(t, filepath.Join(dir, "reports", "TestCounter--increment.json"))
	require.NoFileExists(t, filepath.Join(dir, "reports", "TestCounter--increment.md"), "a pass removes the earlier failure's Markdown")
}

// logTB records what a test logs.
type logTB struct {
	mu   sync.Mutex
	logs []string
}

func (l *logTB) Helper()               {}
func (l *logTB) Name() string          { return "TestCounter" }
func (l *logTB) Errorf(string, ...any) {}
func (l *logTB) Fatalf(string, ...any) {}
func (l *logTB) Logf(format string, args ...any) {
	l.mu.Lock()
	l.logs = append(l.logs, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

// TestAPassSaysWhatItCoveredUnderVerbose: under go test -v a passing check
// logs its coverage line, and the binary says once which PostgreSQL it
// uses; without -v it logs nothing.
func TestAPassSaysWhatItCoveredUnderVerbose(t *testing.T) {
	t.Parallel()
	fixed := counterJob
	fixed.Run = func(ctx context.Context, a *Attempt) error {
		_, err := a.Pool.Exec(ctx, `UPDATE counters SET n = 1 WHERE id = 1`)
		return err
	}
	tb := &logTB{}
	require.True(t, assertWatched(tb, tb.Fatalf, fixed, nil, defaultWatch, publishing{Verbose: true, Stdout: io.Discard}))
	require.Contains(t, tb.logs, "twice: increment: idempotent in 8 scenarios: ack lost 1, crashes 2, duplicate enqueue 1, effect faults 0, interleavings 4 of 6 (READ COMMITTED)")
	srv, err := pgfixture.Shared(t.Context())
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(srv.Provenance(), srv.Mode()+" mode, PostgreSQL 1"), srv.Provenance())

	quiet := &logTB{}
	require.True(t, assertWatched(quiet, quiet.Fatalf, fixed, nil, defaultWatch, publishing{Stdout: io.Discard}))
	require.Empty(t, quiet.logs)
}
