package twice_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/twice"
)

// afterReturn is how long the goroutines of these jobs wait, once the
// job's deferred close woke them, before their call: long enough that the
// job's function has returned even on a loaded machine (a call racing the
// return is still Run's, a point like any other), short of the 500 ms the
// check waits for it.
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
	require.Equal(t, afterRunText, f.Problems[0].Text)
	require.Equal(t, afterRunReport("audit after return"), rep.String())

	rep = twice.Check(context.Background(), orderJob("audit after return", auditAfterReturn(true)))
	require.True(t, rep.OK(), rep.String())
}

// auditOnBackground is auditAfterReturn(false) with its goroutine on
// context.Background(): its calls are not the attempt's at all.
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

// TestAGoroutineOnABackgroundContextIsFoundInItsAttempt: the same goroutine
// on context.Background() is found in the attempt that started it (the
// reference run's), the same on every run: the check waits for the
// goroutines an attempt left running before the next scenario. A call
// without an attempt's context on a worker's handles is the running
// attempt's, so it is the after-Run finding, not a bypass.
func TestAGoroutineOnABackgroundContextIsFoundInItsAttempt(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), orderJob("audit on background", auditOnBackground))
	require.NoError(t, rep.Err)
	require.Len(t, rep.Findings, 1, rep.String())
	require.Equal(t, "once", rep.Findings[0].Token, rep.String())
	require.Equal(t, "a goroutine the attempt started kept using its handles after Run returned: the reference run (one clean delivery)", rep.Findings[0].Headline)
	require.Equal(t, afterRunReport("audit on background"), rep.String())
}

// afterRunText is the after-Run problem: no call, no attempt named.
const afterRunText = "a goroutine the attempt started kept using its handles after Run returned: " +
	"the check refused its calls, so what they meant to do is lost on every delivery\n" +
	"(wait for the goroutine before Run returns (a sync.WaitGroup), or do its work in Run; " +
	"when its calls come depends on the machine's load, so the report names no call, no attempt and no other scenario's result)"

// afterRunReport is the whole report of the job named name whose goroutine
// used the attempt's handles after Run returned.
func afterRunReport(name string) string {
	return "twice: " + name + ": 1 of 1 scenarios broke a promise\n\n" +
		"a goroutine the attempt started kept using its handles after Run returned: the reference run (one clean delivery)\n\n" +
		afterRunText + "\n\n" +
		`replay: TWICE_RUN=once (the scenario's token; or pass twice.Only("once"))`
}

// TestAGoroutineOutlivingRunIsReportedTheSameEveryRun: ten checks of each
// job, two at a time (a loaded machine moves the goroutine's call from the
// reference run's look to a later scenario's, or into the next attempt),
// print one text (issue 43: it was 2 texts in 10 runs on the attempt's
// context, 5 on context.Background()).
func TestAGoroutineOutlivingRunIsReportedTheSameEveryRun(t *testing.T) {
	t.Parallel()
	for name, run := range map[string]func(context.Context, *twice.Attempt) error{
		"audit after return":  auditAfterReturn(false),
		"audit on background": auditOnBackground,
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
			for i, text := range texts {
				require.Equal(t, afterRunReport(name), text, "run %d of 10", i+1)
			}
		})
	}
}
