package twice_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/longtest"
	"github.com/twicekit/twicekit/twice"
)

// slowStatements runs three statements of d each in PostgreSQL: a slow job
// that is idempotent (it changes nothing).
func slowStatements(d time.Duration) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		for range 3 {
			if _, err := a.Pool.Exec(ctx, fmt.Sprintf(`SELECT pg_sleep(%g)`, d.Seconds())); err != nil {
				return err
			}
		}
		return nil
	}
}

// slowSecondStatement runs a fast statement and then one that outlasts
// any AttemptTimeout a test gives it: the point it is slow at is point 2
// however loaded the machine is.
func slowSecondStatement(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `SELECT 1`); err != nil {
		return err
	}
	_, err := a.Pool.Exec(ctx, `SELECT pg_sleep(30)`)
	return err
}

// idles waits outside PostgreSQL until its context ends: a job doing
// nothing the check can see.
func idles(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `SELECT 1`); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestASlowStatementIsNotAHang: a job whose statements outlast
// AttemptTimeout is reported as slow (its statement was running in
// PostgreSQL), naming AttemptTimeout and the option that raises it; a job
// that waits outside PostgreSQL is reported as hung, doing nothing there.
func TestASlowStatementIsNotAHang(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), orderJob("slow statement", slowSecondStatement), twice.AttemptTimeout(time.Second))
	require.NoError(t, rep.Err)
	require.Len(t, rep.Findings, 1, rep.String())
	f := rep.Findings[0]
	require.Equal(t, "an attempt ran longer than AttemptTimeout: the reference run (one clean delivery)", f.Headline)
	require.Equal(t, twice.ProblemSlow, f.Problems[0].Kind)
	require.Contains(t, f.Problems[0].Text, "attempt 1 of job-1 was still running a statement in PostgreSQL after AttemptTimeout: point 2 (SELECT pg_sleep(30)); it is slow, not hung.")
	require.Contains(t, f.Problems[0].Text, "twice.AttemptTimeout(d)")

	rep = twice.Check(context.Background(), orderJob("idles", idles), twice.AttemptTimeout(time.Second))
	require.NoError(t, rep.Err)
	require.Len(t, rep.Findings, 1, rep.String())
	require.Equal(t, twice.ProblemHung, rep.Findings[0].Problems[0].Kind)
	require.Contains(t, rep.Findings[0].Problems[0].Text, "with no statement running in PostgreSQL: it waited outside its handles")

	rep = twice.Check(context.Background(), orderJob("slow statements", slowStatements(100*time.Millisecond)), twice.AttemptTimeout(5*time.Second), twice.WithoutConcurrency("the slow job's fast twin"))
	require.True(t, rep.OK(), rep.String())
}

// TestTheWallBudgetLeavesOutWhatDoesNotFit: a slow job under a generous
// AttemptTimeout ends within its wall budget, and the report names the
// scenarios it left out and the concurrent ones.
func TestTheWallBudgetLeavesOutWhatDoesNotFit(t *testing.T) {
	t.Parallel()
	const budget = 10 * time.Second
	start := time.Now()
	rep := twice.Check(context.Background(), orderJob("slow statements", slowStatements(300*time.Millisecond)),
		twice.AttemptTimeout(60*time.Second), twice.WallBudget(budget))
	elapsed := time.Since(start)
	require.True(t, rep.OK(), rep.String())
	require.Less(t, elapsed, budget+time.Second, "the check ends within its wall budget (plus its setup)")
	text := rep.String()
	require.Contains(t, text, "\nthe wall budget (10s) left out ")
	require.Contains(t, text, "crash@end")
	require.Contains(t, text, "give the check more time with twice.WallBudget(d) or -twice.wall=d")
	require.Contains(t, text, "\nconcurrent deliveries not checked: the wall budget (10s) leaves no room for them")
	require.NotEmpty(t, rep.Tokens(), "what fits is played")
	for _, tok := range rep.Tokens() {
		require.NotContains(t, text[strings.Index(text, "left out"):], tok+",", "a scenario played is not named as left out")
	}
}

// TestThreeFourSecondStatements is the case: three 4 s statements
// under the default AttemptTimeout are reported with AttemptTimeout named;
// with AttemptTimeout(60s) the check ends within its default wall budget
// and names the scenarios it left out.
func TestThreeFourSecondStatements(t *testing.T) {
	longtest.Skip(t, "plays 4 s statements for about two minutes")
	t.Parallel()
	rep := twice.Check(context.Background(), orderJob("three 4 s statements", slowStatements(4*time.Second)))
	require.NoError(t, rep.Err)
	require.Len(t, rep.Findings, 1, rep.String())
	require.Equal(t, twice.ProblemSlow, rep.Findings[0].Problems[0].Kind)
	require.Contains(t, rep.String(), "after AttemptTimeout")
	require.Contains(t, rep.String(), "twice.AttemptTimeout(d)")

	start := time.Now()
	rep = twice.Check(context.Background(), orderJob("three 4 s statements", slowStatements(4*time.Second)), twice.AttemptTimeout(60*time.Second),
		twice.WallBudget(twice.DefaultWallBudget)) // the default, whatever TWICE_WALL says (.ci/run sets 0)
	require.Less(t, time.Since(start), twice.DefaultWallBudget+10*time.Second)
	require.True(t, rep.OK(), rep.String())
	require.Contains(t, rep.String(), "the wall budget (2m0s) left out ")
}
