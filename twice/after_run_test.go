package twice_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/twice"
)

// afterReturn is how long the goroutines of these jobs wait, once the
// job's deferred close woke them, before their call: long enough that the
// job's function has returned even on a loaded machine (a call racing the
// return is still Run's, a point like any other), short of the 2 s the
// check waits for the goroutine.
const afterReturn = 200 * time.Millisecond

// auditAfterReturn settles the order in Run and leaves the audit row to a
// goroutine that writes after Run returned (wait false), or waits for it
// before returning (wait true).
func auditAfterReturn(wait bool) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		if _, err := a.Pool.Exec(ctx, `UPDATE orders SET settled = true WHERE id = 6735`); err != nil {
			return err
		}
		returning := make(chan struct{})
		defer close(returning)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !wait {
				<-returning
				time.Sleep(afterReturn) // Run has returned by now
			}
			for range 3 {
				if _, err := a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735`); err != nil {
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
		if wait {
			wg.Wait()
		}
		return nil
	}
}

// TestAGoroutineUsingHandlesAfterRunIsAFinding: a job whose goroutine
// writes through the attempt's handles after Run returned gets its own
// finding, in the attempt that started it (the reference run's), the same
// on every run; the twin that waits for its goroutine passes.
func TestAGoroutineUsingHandlesAfterRunIsAFinding(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), orderJob("audit after return", auditAfterReturn(false)))
	require.NoError(t, rep.Err)
	require.Len(t, rep.Findings, 1, rep.String())
	f := rep.Findings[0]
	require.Equal(t, "once", f.Token, "the reference run's attempt started the goroutine")
	require.Equal(t, "a goroutine the attempt started kept using its handles after Run returned: the reference run (one clean delivery)", f.Headline)
	require.Len(t, f.Problems, 1)
	require.Equal(t, twice.ProblemAfterRun, f.Problems[0].Kind)
	require.Equal(t, afterRunText+"\nstarted by "+auditSite(t, rep), f.Problems[0].Text)
	require.Equal(t, afterRunReportAt("audit after return", auditSite(t, rep)), rep.String())

	rep = twice.Check(context.Background(), orderJob("audit after return", auditAfterReturn(true)))
	require.True(t, rep.OK(), rep.String())
}

// auditOnBackground is auditAfterReturn(false) with its goroutine on
// context.Background(): a context that outlives the attempt.
func auditOnBackground(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `UPDATE orders SET settled = true WHERE id = 6735`); err != nil {
		return err
	}
	returning := make(chan struct{})
	defer close(returning)
	go func() {
		<-returning
		time.Sleep(afterReturn) // Run has returned by now
		_, _ = a.Pool.Exec(context.Background(), `UPDATE orders SET notified = true WHERE id = 6735`)
	}()
	return nil
}

// TestAGoroutineOnABackgroundContextRunsAfterTheAck: the same goroutine on
// context.Background() runs on after the ack, as in production (issue 39,
// item 3; it was the after-Run finding, and its write was refused). A call
// without an attempt's context on a worker's handles is the running
// attempt's: here its point 2, after the ack. The crash there loses the
// write, and no redelivery brings it back (the job was acked).
func TestAGoroutineOnABackgroundContextRunsAfterTheAck(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), orderJob("audit on background", auditOnBackground))
	require.NoError(t, rep.Err)
	require.Equal(t, twice.Kept, rep.Reference.Verdict, rep.String())
	points := rep.Reference.Attempts[0].Points
	require.Len(t, points, 2, rep.String())
	require.True(t, points[1].AfterAck)
	require.Len(t, rep.Findings, 1, rep.String())
	require.Equal(t, "crash@2", rep.Findings[0].Token, rep.String())
	require.Equal(t, "not idempotent: crash after the ack, before point 2 of 2 (UPDATE orders SET notified = true WHERE id = 6735): "+
		"the worker died after the ack, before the goroutine's work; the job was acked, so no redelivery", rep.Findings[0].Headline)
}

// afterRunText is the after-Run problem: no call, no attempt named.
const afterRunText = "a goroutine the attempt started kept using its handles after Run returned: " +
	"the attempt's context ended with Run (every queue ends it), so its calls fail and what they meant to do is lost on every delivery\n" +
	"(wait for the goroutine before Run returns (a sync.WaitGroup), or do its work in Run; " +
	"work meant to run after the ack takes a context that outlives the attempt, context.WithoutCancel(ctx))"

// afterRunReport is the whole report of the job named name whose goroutine
// used the attempt's handles after Run returned.
func afterRunReport(name string) string {
	return "twice: " + name + ": 1 of 1 scenarios broke a promise\n\n" +
		"a goroutine the attempt started kept using its handles after Run returned: the reference run (one clean delivery)\n\n" +
		afterRunText + "\n\n" +
		`replay: TWICE_RUN=once (the scenario's token; or pass twice.Only("once"))`
}

// auditSite is where auditAfterReturn's goroutine was started, as rep
// names it: the closure's name depends on where the compiler inlined
// auditAfterReturn, so it is read back from the report, and its line is
// checked.
func auditSite(t *testing.T, rep *twice.Report) string {
	t.Helper()
	_, site, ok := strings.Cut(rep.String(), "\nstarted by ")
	require.True(t, ok, rep.String())
	site, _, _ = strings.Cut(site, "\n")
	require.Regexp(t, `^twice_test\.(\w+\.)*auditAfterReturn\.func\d+ at twice/after_run_test\.go:34$`, site)
	return site
}

// TestAGoroutineOutlivingRunIsReportedTheSameEveryRun: ten checks, two at
// a time, print one text (issue 43: it was 2 texts in 10 runs on the
// attempt's context, 5 on context.Background()). The job on
// context.Background() is no longer an after-Run finding: it runs after
// the ack (TestAGoroutineOnABackgroundContextRunsAfterTheAck).
func TestAGoroutineOutlivingRunIsReportedTheSameEveryRun(t *testing.T) {
	t.Parallel()
	for name, run := range map[string]func(context.Context, *twice.Attempt) error{
		"audit after return": auditAfterReturn(false),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			texts := make([]string, 10)
			sem := make(chan struct{}, 2)
			var wg sync.WaitGroup
			for i := range texts {
				wg.Go(func() {
					sem <- struct{}{}
					defer func() { <-sem }()
					texts[i] = twice.Check(context.Background(), orderJob(name, run)).String()
				})
			}
			wg.Wait()
			_, site, _ := strings.Cut(texts[0], "\nstarted by ")
			site, _, _ = strings.Cut(site, "\n")
			require.Contains(t, site, "auditAfterReturn")
			for i, text := range texts {
				require.Equal(t, afterRunReportAt(name, site), text, "run %d of 10", i+1)
			}
		})
	}
}
