package twice_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/twice"
)

// Goroutines past Run, as production has them (issue 39, item 3): the
// attempt's context ends when Run returns, as every queue ends it, and a
// goroutine on a context that outlives the attempt runs on after the ack.

// writeLateOnCtx settles the order in Run and leaves a goroutine that
// writes on the attempt's context 30 ms after Run returned: pgxpool fails
// the call on the ended context before any statement tracer sees it, so
// the check asks at the acquire.
func writeLateOnCtx(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `UPDATE orders SET settled = true WHERE id = 6735`); err != nil {
		return err
	}
	returning := make(chan struct{})
	defer close(returning)
	go func() {
		<-returning
		time.Sleep(30 * time.Millisecond) // Run has returned by now
		_, _ = a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735`)
	}()
	return nil
}

// writeLateSite is where writeLateOnCtx starts its goroutine.
const writeLateSite = "twice_test.writeLateOnCtx at twice/after_ack_test.go:30"

// TestAGoroutineOnTheEndedContextIsAFindingEveryRun: ten checks, two at a
// time on a loaded machine, each one finding naming the go statement. The
// goroutine's call comes after the context ended in every run; the check
// waits for the goroutine (it waits up to 2 s, the goroutine takes 30 ms),
// so the call is seen in its own attempt whatever the load.
func TestAGoroutineOnTheEndedContextIsAFindingEveryRun(t *testing.T) {
	t.Parallel()
	texts := make([]string, 10)
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := range texts {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			texts[i] = twice.Check(context.Background(), orderJob("write late on ctx", writeLateOnCtx)).String()
		})
	}
	wg.Wait()
	for i, text := range texts {
		require.Equal(t, afterRunReportAt("write late on ctx", writeLateSite), text, "run %d of 10", i+1)
	}
}

// afterRunReportAt is afterRunReport with the goroutine's go statement.
func afterRunReportAt(name, site string) string {
	return strings.Replace(afterRunReport(name), afterRunText, afterRunText+"\nstarted by "+site, 1)
}

var receipt = effects.Email{To: "ada@example.com", Subject: "Receipt for order 6735"}

// receiptAfterCommit settles the order, then sends the receipt from a
// goroutine on context.WithoutCancel(ctx), as a post-commit hook does: in
// production it runs after the ack (it waits for Run to return, so that it
// does on every run). wait makes Run wait for it instead. A redelivery
// sends the receipt again, which at-least-once allows.
func receiptAfterCommit(wait bool) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		if _, err := a.Pool.Exec(ctx, `UPDATE orders SET settled = true WHERE id = 6735`); err != nil {
			return err
		}
		returning := make(chan struct{})
		defer close(returning)
		var wg sync.WaitGroup
		wg.Go(func() {
			if !wait {
				<-returning
			}
			_ = a.Mailer.Send(context.WithoutCancel(ctx), receipt)
		})
		if wait {
			wg.Wait()
		}
		return nil
	}
}

// TestAGoroutineAfterTheAckIsPlayedAsTheAttempts: the goroutine's email is
// the attempt's point 2, after the ack; the reference run passes, and the
// crash after the ack, before the email, loses it with no redelivery: a
// finding under at-least-once. The twin that waits for the goroutine in
// Run gets its email redelivered after that crash, and passes.
func TestAGoroutineAfterTheAckIsPlayedAsTheAttempts(t *testing.T) {
	t.Parallel()
	atLeastOnce := twice.EffectPolicy(effects.KindEmail, effects.AtLeastOnce)
	rep := twice.Check(context.Background(), orderJob("receipt after the ack", receiptAfterCommit(false)), atLeastOnce)
	require.NoError(t, rep.Err)
	ref := rep.Reference
	require.NotNil(t, ref)
	require.Equal(t, twice.Kept, ref.Verdict, rep.String())
	require.Len(t, ref.Attempts, 1)
	points := ref.Attempts[0].Points
	require.Len(t, points, 2, rep.String())
	require.False(t, points[0].AfterAck)
	require.True(t, points[1].AfterAck, "the email comes after the ack")
	require.Len(t, rep.Findings, 1, rep.String())
	f := rep.Findings[0]
	require.Equal(t, "crash@2", f.Token)
	require.Equal(t, "crash after the ack, before point 2 of 2 (email to ada@example.com: Receipt for order 6735): "+
		"the worker died after the ack, before the goroutine's work; the job was acked, so no redelivery", f.Scenario.Describe())
	require.Equal(t, []string{`email ada@example.com "Receipt for order 6735": want 1, got 0 (at-least-once)`}, mismatchStrings(f.Effects), rep.String())
	var afterApplied string
	for _, sr := range rep.Scenarios {
		if sr.Scenario.Token() == "crash-after@2" {
			afterApplied = sr.Scenario.Describe()
		}
	}
	require.Equal(t, "crash after point 2 of 2 was applied (email to ada@example.com: Receipt for order 6735), after the ack: "+
		"the worker died before the goroutine heard back; the job was acked, so no redelivery", afterApplied, "the email was sent once: kept")

	rep = twice.Check(context.Background(), orderJob("receipt in Run", receiptAfterCommit(true)), atLeastOnce)
	require.True(t, rep.OK(), rep.String())
}

// TestAGoroutineOutlivingTheWaitIsAFinding: a goroutine still running 2 s
// after Run returned is the after-Run finding, which states the bound: the
// check compares without what it does later.
func TestAGoroutineOutlivingTheWaitIsAFinding(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(release); wg.Wait() })
	rep := twice.Check(context.Background(), orderJob("still running", func(ctx context.Context, a *twice.Attempt) error {
		wg.Go(func() { <-release })
		_, err := a.Pool.Exec(ctx, `UPDATE orders SET settled = true WHERE id = 6735`)
		return err
	}))
	require.NoError(t, rep.Err)
	require.Len(t, rep.Findings, 1, rep.String())
	f := rep.Findings[0]
	require.Equal(t, "once", f.Token)
	require.Equal(t, twice.ProblemAfterRun, f.Problems[0].Kind)
	require.Equal(t, "a goroutine the attempt started was still running 2s after Run returned: "+
		"the check waits that long for the goroutines an attempt leaves running, then compares, so what it does later is not seen\n"+
		"(end it before Run returns, or let it end soon after: a goroutine on the attempt's context sees it end when Run returns)", f.Problems[0].Text)
}
