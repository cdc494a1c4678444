package twice_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
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
// AttemptTimeout ends within its wall budget; the report names every
// scenario it left out, the concurrent ones too; ExpectIdempotent fails the
// partial check, saying how to give it room, unless PartialCheck says why
// it is enough.
func TestTheWallBudgetLeavesOutWhatDoesNotFit(t *testing.T) {
	t.Parallel()
	const budget = 10 * time.Second
	job := orderJob("slow statements", slowStatements(300*time.Millisecond))
	// The four checks wait on slow statements for their whole budget: they
	// run at once, and their results are read after.
	var rep, repPartialOK *twice.Report
	var elapsed time.Duration
	tb, tbPartialOK := &fakeTB{name: "TestSlow"}, &fakeTB{name: "TestSlow"}
	var passed, passedPartialOK bool
	var checks sync.WaitGroup
	checks.Go(func() {
		start := time.Now()
		rep = twice.Check(context.Background(), job, twice.AttemptTimeout(60*time.Second), twice.WallBudget(budget))
		elapsed = time.Since(start)
	})
	checks.Go(func() {
		passed = twice.ExpectIdempotent(tb, job, twice.AttemptTimeout(60*time.Second), twice.WallBudget(budget))
	})
	checks.Go(func() {
		passedPartialOK = twice.ExpectIdempotent(tbPartialOK, job, twice.AttemptTimeout(60*time.Second), twice.WallBudget(budget), twice.PartialCheck("a smoke test; the nightly run has no bound"))
	})
	checks.Go(func() {
		repPartialOK = twice.Check(context.Background(), job, twice.AttemptTimeout(60*time.Second), twice.WallBudget(budget), twice.PartialCheck("a smoke test; the nightly run has no bound"))
	})
	checks.Wait()
	require.True(t, rep.OK(), rep.String())
	require.Less(t, elapsed, budget+3*time.Second, "the check ends within its wall budget (plus its setup, beside three more checks)")
	text := rep.String()
	// What fits depends on the machine's speed: the sequential ones may
	// all fit, the concurrent ones cannot (each costs about 2 s, and the
	// first round of the sequential ones leaves less than that).
	require.Contains(t, text, "\nconcurrent deliveries not checked: the wall budget (10s) ran out before the first of them")
	require.Contains(t, text, "give the check room with TWICE_WALL=d, -twice.wall=d or twice.WallBudget(d)")
	require.NotEmpty(t, rep.Tokens(), "what fits is played")
	require.Equal(t, "sequential", rep.Tokens()[0], "every kind's first scenario plays first")
	if i := strings.Index(text, "\nthe wall budget (10s) left out "); i >= 0 {
		require.Contains(t, text, "(the scenarios played in rounds: every kind's first before any kind's second); give the check room with TWICE_WALL=d, -twice.wall=d or twice.WallBudget(d)")
		for _, tok := range rep.Tokens() {
			require.NotContains(t, text[i:], " "+tok+",", "a scenario played is not named as left out")
		}
	}
	require.True(t, strings.HasPrefix(rep.Partial(), "concurrent deliveries not checked: the wall budget (10s) ran out before the first of them"), rep.Partial())
	js, err := rep.JSON()
	require.NoError(t, err)
	require.Contains(t, string(js), `"concurrency": "not checked: the wall budget (10s) ran out before the first of them`)
	require.Contains(t, string(js), `"partial": "concurrent deliveries not checked: the wall budget (10s) ran out before the first of them`)

	require.False(t, passed)
	require.Len(t, tb.errors, 1, tb.String())
	require.True(t, strings.HasPrefix(tb.errors[0], "twice: slow statements: the check is partial: no promise broken in "), tb.errors[0])
	require.Contains(t, tb.errors[0], "\nconcurrent deliveries not checked: the wall budget (10s) ran out before the first of them")
	require.True(t, strings.HasSuffix(tb.errors[0], "\n\nA partial check is not a pass. Give the check room (TWICE_WALL=10m, -twice.wall=10m or twice.WallBudget(10*time.Minute); 0 for no bound), or, where a partial check is enough, say why with twice.PartialCheck(reason)."), tb.errors[0])

	require.True(t, passedPartialOK, tbPartialOK.String())
	rep = repPartialOK
	require.Contains(t, rep.String(), "\na partial check is enough for this test (twice.PartialCheck): a smoke test; the nightly run has no bound")
	js, err = rep.JSON()
	require.NoError(t, err)
	require.Contains(t, string(js), `"partial_ok": "a smoke test; the nightly run has no bound"`)
}

// raceAfterSleeps is a check-then-act race in two autocommit statements
// (no unique key stops the second insert) after n statements of 50 ms.
func raceAfterSleeps(n int) twice.Job {
	return ledgerNoUniqueJob(fmt.Sprintf("check-then-act after %d slow statements", n), func(ctx context.Context, a *twice.Attempt) error {
		for range n {
			if _, err := a.Pool.Exec(ctx, `SELECT pg_sleep(0.05)`); err != nil {
				return err
			}
		}
		var n int
		if err := a.Pool.QueryRow(ctx, `SELECT count(*) FROM points_ledger WHERE order_id = 9812`).Scan(&n); err != nil || n > 0 {
			return err
		}
		_, err := a.Pool.Exec(ctx, `INSERT INTO points_ledger (customer_id, order_id, reason, points) VALUES (77, 9812, 'order_reward', 50)`)
		return err
	})
}

// TestARaceAfterSlowStatementsIsNeverAPartialPass is issue 43's case: a
// check-then-act race after 11 statements of 50 ms, under the default wall
// budget whatever TWICE_WALL says, is flagged or fails as partial; it
// never passes. Under the old forecast the concurrent scenarios were left
// out before any played, and the check passed.
func TestARaceAfterSlowStatementsIsNeverAPartialPass(t *testing.T) {
	longtest.Skip(t, "plays 50 ms statements for up to the default wall budget")
	t.Parallel()
	tb := &fakeTB{name: "TestRace"}
	require.False(t, twice.ExpectIdempotent(tb, raceAfterSleeps(11), twice.WallBudget(twice.DefaultWallBudget)))
	require.Len(t, tb.errors, 1, tb.String())
	if !strings.Contains(tb.errors[0], "the check is partial") {
		require.Contains(t, tb.errors[0], "\nnot idempotent: overlap after point ", tb.errors[0])
	}
}

// TestTheConcurrentScenariosGetTheirFirstOnesUnderATightBudget: with room
// for a few scenarios after the sequential ones' first round, the race is
// flagged by an overlap, where the old forecast left the concurrent
// scenarios out; the sequential scenarios that did not fit are named.
func TestTheConcurrentScenariosGetTheirFirstOnesUnderATightBudget(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), raceAfterSleeps(2), twice.WallBudget(25*time.Second), twice.WithoutDuplicateEnqueue("not this test's subject"))
	require.NoError(t, rep.Err)
	require.NotEmpty(t, rep.Findings, rep.String())
	var overlaps []string
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Token, "overlap@") || strings.HasPrefix(f.Token, "concurrent:") {
			overlaps = append(overlaps, f.Token)
		}
	}
	require.NotEmpty(t, overlaps, "a concurrent scenario flags the race: %s", rep.String())
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
	// What it left out depends on the machine's speed: the concurrent
	// scenarios (each about 24 s) at least, the sequential ones beyond the
	// first round too on a loaded machine.
	require.Contains(t, rep.Partial(), "the wall budget (2m0s) ", rep.String())
}
