package twice

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
)

// deadlineTB is a test with a deadline, as *testing.T under go test
// -timeout; it signals its first progress line.
type deadlineTB struct {
	deadline time.Time
	mu       sync.Mutex
	logs     []string
	logged   chan struct{}
	once     sync.Once
}

func (d *deadlineTB) Helper()                     {}
func (d *deadlineTB) Name() string                { return "TestSlowJob" }
func (d *deadlineTB) Errorf(string, ...any)       {}
func (d *deadlineTB) Fatalf(string, ...any)       {}
func (d *deadlineTB) Deadline() (time.Time, bool) { return d.deadline, true }
func (d *deadlineTB) Logf(format string, args ...any) {
	d.mu.Lock()
	d.logs = append(d.logs, fmt.Sprintf(format, args...))
	d.mu.Unlock()
	d.once.Do(func() { close(d.logged) })
}

// signalWriter is a stderr that signals its first write.
type signalWriter struct {
	mu      sync.Mutex
	b       strings.Builder
	written chan struct{}
	once    sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.b.Write(p)
	w.mu.Unlock()
	w.once.Do(func() { close(w.written) })
	return len(p), nil
}

// TestAWatchedCheckSaysWhereItStands: while a check runs, the test logs
// which scenario it is in, and just before go test's -timeout ends the
// binary, one line on stderr names it. The job's reference run waits until
// both were seen, so nothing here depends on timing.
func TestAWatchedCheckSaysWhereItStands(t *testing.T) {
	release := make(chan struct{})
	job := Job{
		Name:   "slow job",
		Schema: pgfixture.SQL(`CREATE TABLE t (id int PRIMARY KEY)`),
		Run: func(ctx context.Context, a *Attempt) error {
			if a.Number == 1 && a.JobID == "job-1" {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			_, err := a.Pool.Exec(ctx, `INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING`)
			return err
		},
	}
	tb := &deadlineTB{deadline: time.Now().Add(time.Hour + 50*time.Millisecond), logged: make(chan struct{})}
	out := &signalWriter{written: make(chan struct{})}
	w := watchSettings{Every: 20 * time.Millisecond, Margin: time.Hour, Stderr: out}
	ok := make(chan bool, 1)
	go func() {
		ok <- assertWatched(tb, tb.Fatalf, job, []Option{Only("sequential"), WithoutConcurrency("not needed here")}, w, publishing{})
	}()
	<-tb.logged
	<-out.written
	close(release)
	require.True(t, <-ok)

	tb.mu.Lock()
	first := tb.logs[0]
	tb.mu.Unlock()
	require.Contains(t, []string{"twice: the check of slow job is setting up its database", "twice: the check of slow job is running scenario 1 (once)"}, first)
	out.mu.Lock()
	line := out.b.String()
	out.mu.Unlock()
	require.Regexp(t, `^twice: TestSlowJob: go test -timeout is about to end the test binary; the check of slow job (is setting up its database|is running scenario 1 \(once\)) \(raise -timeout, or run fewer scenarios: -short, -twice.budget=quick, or -twice.run=TOKEN\)\n$`, line)
}
