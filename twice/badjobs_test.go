package twice_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/twice"
)

// outerT stands for the test's *testing.T captured by a job's closure: like
// it, its FailNow ends the calling goroutine with runtime.Goexit.
type outerT struct{}

func (outerT) Errorf(string, ...any) {}
func (outerT) FailNow()              { runtime.Goexit() }

// requireInRun is a job that asserts with testify's require inside Run, as
// a test that closes over its t easily does.
func requireInRun(ctx context.Context, a *twice.Attempt) error {
	_, err := a.Pool.Exec(ctx, `SELECT 1`)
	require.NoError(outerT{}, errors.New("no rows")) // the job's line in the report
	return err
}

// failNowOnRedelivery calls FailNow only when delivered again.
func failNowOnRedelivery(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `
WITH added AS (
  INSERT INTO points_ledger (customer_id, order_id, reason, points)
  VALUES (77, 9812, 'order_reward', 50) ON CONFLICT (order_id, reason) DO NOTHING RETURNING customer_id, points)
UPDATE customers c SET points = c.points + added.points FROM added WHERE c.id = added.customer_id`); err != nil {
		return err
	}
	if a.Number > 1 {
		outerT{}.FailNow()
	}
	return nil
}

// TestGoexitInsideAnAttempt: t.FailNow (runtime.Goexit) inside Run is
// reported as what it is, with the job's line, at once — not as a hang. The
// attempt timeout is long, so a Goexit taken for a hang would show as one.
func TestGoexitInsideAnAttempt(t *testing.T) {
	t.Parallel()
	long := twice.AttemptTimeout(time.Minute)
	t.Run("on the clean run", func(t *testing.T) {
		rep, tokens := findingTokens(t, loyaltyJob("require in Run", requireInRun), long)
		require.Equal(t, []string{"once"}, tokens)
		f := rep.Findings[0]
		require.Equal(t, "the job ended its goroutine: the reference run (one clean delivery)", f.Headline)
		require.Len(t, f.Problems, 1)
		require.Regexp(t, `^attempt 1 of job-1 called t\.FailNow \(or runtime\.Goexit\) at badjobs_test\.go:\d+: return an error from Run instead `, f.Problems[0].Text)
		line := lineOf(t, "require.NoError(outerT{}")
		require.Contains(t, f.Problems[0].Text, " at badjobs_test.go:"+line+": ")
		require.Contains(t, f.Timeline, "called t.FailNow (runtime.Goexit)")
	})
	t.Run("on redelivery", func(t *testing.T) {
		rep, tokens := findingTokens(t, loyaltyJob("fail now when redelivered", failNowOnRedelivery), long, twice.Only("sequential"))
		require.Equal(t, []string{"sequential"}, tokens)
		f := rep.Findings[0]
		require.Equal(t, "the job ended its goroutine: sequential: the ack was lost and the same job was delivered again", f.Headline)
		require.Equal(t, []string{"attempt 2 of job-1 called t.FailNow (or runtime.Goexit) at badjobs_test.go:" + lineOf(t, "outerT{}.FailNow()") +
			": return an error from Run instead (t.Fatal, t.FailNow and testify's require end the goroutine they run on, which is the attempt's, not the test's; the check stops here)"}, problems(f))
	})
}

// lineOf is the line number in this file of the job's line containing s.
func lineOf(t *testing.T, s string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, s) && !strings.Contains(l, "lineOf(") && !strings.Contains(l, "func (outerT)") {
			return strconv.Itoa(i + 1)
		}
	}
	t.Fatalf("no line with %q", s)
	return ""
}

// hangsOnRedelivery does its work, then hangs whenever it is delivered
// again (it waits for its context, as a job stuck on a lock would).
func hangsOnRedelivery(ctx context.Context, a *twice.Attempt) error {
	for _, q := range []string{`SELECT 1`, `SELECT 2`, `UPDATE customers SET points = 50 WHERE id = 77`} {
		if _, err := a.Pool.Exec(ctx, q); err != nil {
			return err
		}
	}
	if a.Number > 1 {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

// TestAHangEndsTheCheck: the first hung attempt ends the check; the report
// says which scenarios were left out, so a hanging job costs one attempt
// timeout, not one per scenario.
func TestAHangEndsTheCheck(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, loyaltyJob("hangs when redelivered", hangsOnRedelivery), twice.AttemptTimeout(time.Second))
	require.Equal(t, []string{"sequential"}, tokens)
	require.Equal(t, []string{"sequential"}, rep.Tokens(), "nothing runs after the hang")
	require.Equal(t, []string{"attempt 2 of job-1 hung after point 3 (UPDATE customers SET points = 50 WHERE id = 77): still running after 1s (AttemptTimeout), with no statement running in PostgreSQL: it waited outside its handles (a channel, a mutex, time.Sleep, a network call); if it is only slow there, give it more time with twice.AttemptTimeout(d); its connections were cut and its context cancelled"}, problems(rep.Findings[0]))
	require.True(t, strings.HasSuffix(rep.String(), "\nnot run after the hang in sequential: 5 more scenarios and the concurrent ones (each would wait out AttemptTimeout the same way; fix the hang, then check again)"), rep.String())
}
