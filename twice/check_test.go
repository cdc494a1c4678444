package twice_test

import (
	"context"
	"flag"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/leakcheck"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

func TestMain(m *testing.M) {
	flag.Parse()
	atOnce := 6
	if raceDetector {
		atOnce = 4
	}
	parallelUnlessSet(max(atOnce, runtime.GOMAXPROCS(0)))
	leakcheck.Exit(pgfixture.Main(m))
}

// parallelUnlessSet runs n tests at once where -test.parallel does not say
// how many. A check mostly waits, on PostgreSQL and on timers (attempt
// timeouts, settle waits, slow statements), so on 2 cores 4 at once take
// about 60 % of the wall time 2 take, and 6 give the package more of the
// machine while the adapters' tests beside it wait on their engines
// (BENCHMARKS.md). About 110 backends at most, of the local cluster's 200.
func parallelUnlessSet(n int) {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// findingTokens runs a check and returns the tokens of the scenarios that
// broke a promise.
func findingTokens(t *testing.T, job twice.Job, opts ...twice.Option) (*twice.Report, []string) {
	t.Helper()
	rep := twice.Check(context.Background(), job, opts...)
	require.NoError(t, rep.Err)
	var tokens []string
	for _, f := range rep.Findings {
		tokens = append(tokens, f.Token)
	}
	return rep, tokens
}

func TestIncrementIsFlaggedBySequentialAndLedgerPasses(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, loyaltyJob("increment points", incrementPoints))
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue", "overlap@1"}, tokens)
	f := rep.Findings[0]
	require.Equal(t, "not idempotent: sequential: the ack was lost and the same job was delivered again", f.Headline)
	require.Len(t, f.Database, 1)
	require.Equal(t, "customers", f.Database[0].Table)

	rep, tokens = findingTokens(t, loyaltyJob("ledger CTE", ledgerCTE))
	require.Empty(t, tokens, rep.String())
	require.Equal(t, []string{"sequential", "crash@1", "crash@end", "duplicate-enqueue", "overlap@1", "concurrent:A2B2", "concurrent:BABA", "concurrent:B2A2"}, rep.Tokens())
}

func TestCrashBetweenTwoStatementsIsALostUpdate(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, loyaltyJob("ledger, two statements", ledgerTwoStatements))
	require.Equal(t, []string{"crash@2"}, tokens, rep.String())
	require.Contains(t, rep.Findings[0].Headline, "crash before point 2 of 2 (UPDATE customers SET points = points + 50 WHERE id = $1), then redelivery")

	rep, tokens = findingTokens(t, loyaltyJob("ledger, one transaction", ledgerInTransaction), twice.EveryCrashPoint())
	require.Empty(t, tokens, rep.String())
	require.Equal(t, []string{"sequential", "crash@1", "crash@2", "crash@3", "crash@4", "crash@end", "duplicate-enqueue"}, withoutConcurrent(rep.Tokens()))

	// Crash states explored once: before BEGIN and before the INSERT the
	// world is the same; the INSERT takes a value of the ledger's sequence,
	// so a crash before the UPDATE leaves another one, and before the COMMIT
	// the same as before the UPDATE (the UPDATE is not committed yet).
	rep, tokens = findingTokens(t, loyaltyJob("ledger, one transaction", ledgerInTransaction))
	require.Empty(t, tokens, rep.String())
	require.Equal(t, []string{"sequential", "crash@1", "crash@3", "crash@end", "duplicate-enqueue"}, withoutConcurrent(rep.Tokens()))
	require.Contains(t, rep.String(), "\n2 crash points not replayed: they leave the same rows, sequences and effects as an earlier one that kept every promise (crash@2 by crash@1; crash@4 by crash@3); twice.EveryCrashPoint() replays them")
}

func TestSendThenMarkDuplicatesUnderExactlyOnce(t *testing.T) {
	t.Parallel()
	job := ordersJob("receipt: send, then mark", sendThenMark)
	rep, tokens := findingTokens(t, job)
	require.Equal(t, []string{"crash@3", "crash-after@2", "reply-lost@2", "overlap@1"}, tokens, rep.String())
	require.Equal(t, []string{`email ann@example.com "Your receipt for order 9812": want 1, got 2 (exactly-once)`},
		mismatchStrings(rep.Findings[0].Effects))

	rep, tokens = findingTokens(t, job, twice.EffectPolicy("email", effects.AtLeastOnce))
	require.Empty(t, tokens, rep.String())
}

func TestMarkThenSendLosesEmailUnderExactlyOnce(t *testing.T) {
	t.Parallel()
	job := ordersJob("invoice: mark, then send", markThenSend)
	norm := twice.Normalize("invoices.email_sent_at", setOrNull)
	rep, tokens := findingTokens(t, job, norm)
	require.Equal(t, []string{"crash@2"}, tokens, rep.String())
	require.Equal(t, []string{`email billing@example.com "Invoice 381": want 1, got 0 (exactly-once)`},
		mismatchStrings(rep.Findings[0].Effects))

	rep, tokens = findingTokens(t, job, norm, twice.EffectPolicy("email", effects.AtMostOnce))
	require.Empty(t, tokens, rep.String())
}

func TestProcessedJobsIsFlaggedOnlyByDuplicateEnqueue(t *testing.T) {
	t.Parallel()
	job := loyaltyJob("processed_jobs", processedJobs)
	rep, tokens := findingTokens(t, job)
	require.Equal(t, []string{"duplicate-enqueue"}, tokens, rep.String())

	rep, tokens = findingTokens(t, job, twice.WithoutDuplicateEnqueue("enqueued in the order's transaction"))
	require.Empty(t, tokens, rep.String())
	require.Contains(t, rep.String(), "duplicate enqueue not checked: enqueued in the order's transaction")
}

func TestAdvanceStatusIsFlaggedMakeDeliveredPasses(t *testing.T) {
	t.Parallel()
	_, tokens := findingTokens(t, ordersJob("advance status", advanceStatus))
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue", "overlap@1"}, tokens)
	rep, tokens := findingTokens(t, ordersJob("make delivered", makeDelivered))
	require.Empty(t, tokens, rep.String())
}

func TestBadJobsGetClearMessages(t *testing.T) {
	t.Parallel()
	t.Run("hangs", func(t *testing.T) {
		rep, tokens := findingTokens(t, loyaltyJob("hangs", hangs), twice.AttemptTimeout(2*time.Second))
		require.Equal(t, []string{"once"}, tokens)
		require.Equal(t, "an attempt hung: the reference run (one clean delivery)", rep.Findings[0].Headline)
		require.Equal(t, []string{"attempt 1 of job-1 hung after point 1 (SELECT 1), with no statement running in PostgreSQL: it waited outside its handles (a channel, a mutex, time.Sleep, a network call); if it is only slow there, give it more time with twice.AttemptTimeout(d); its connections were cut and its context cancelled"}, problems(rep.Findings[0]))
		require.Equal(t, twice.ProblemHung, rep.Findings[0].Problems[0].Kind)
		require.Equal(t, "attempt 1 of job-1", rep.Findings[0].Problems[0].Attempt)
	})
	t.Run("panics", func(t *testing.T) {
		rep, tokens := findingTokens(t, loyaltyJob("panics", panics))
		require.Equal(t, []string{"once"}, tokens)
		p := rep.Findings[0].Problems[0].Text
		require.Equal(t, twice.ProblemPanic, rep.Findings[0].Problems[0].Kind)
		require.True(t, strings.HasPrefix(p, "attempt 1 of job-1 panicked:\n  panic: assignment to entry in nil map\n"), p)
		require.Contains(t, p, "twice_test.panics(...)\n          jobs_test.go:")
	})
	t.Run("background context", func(t *testing.T) {
		rep, tokens := findingTokens(t, loyaltyJob("background ctx", backgroundContext))
		require.NotContains(t, tokens, "once", rep.String())
		require.NotContains(t, rep.String(), "the job bypassed its handles")
		require.Contains(t, tokens, "crash-after@2")
		require.Equal(t, "email to ann@example.com: Your points", rep.Reference.Attempts[0].Points[1].Label)
	})
	t.Run("never succeeds", func(t *testing.T) {
		rep, tokens := findingTokens(t, loyaltyJob("fails", failsEveryTime), twice.Only("sequential"))
		require.Equal(t, []string{"sequential"}, tokens)
		require.Equal(t, []string{"job-1 never succeeded: the queue gave up after 5 deliveries; the last time it returned: payment provider unavailable (delivery 6)"}, problems(rep.Findings[0]))
	})
	t.Run("seed fails", func(t *testing.T) {
		job := loyaltyJob("bad seed", ledgerCTE)
		job.Seed = twice.SeedSQL(`INSERT INTO customers (id) VALUES (1)`)
		rep := twice.Check(context.Background(), job, twice.KeepFailedDatabase())
		require.Error(t, rep.Err)
		require.Empty(t, rep.KeptDatabase, "a seed that does not fit the schema leaves nothing to inspect")
		require.Contains(t, rep.Err.Error(), "twice: the seed data failed to insert: seed statement 1:")
		require.Contains(t, rep.Err.Error(), `null value in column "name"`)
	})
	t.Run("unknown token", func(t *testing.T) {
		rep := twice.Check(context.Background(), loyaltyJob("ledger", ledgerCTE), twice.Only("crash@9"), twice.KeepFailedDatabase())
		require.EqualError(t, rep.Err, `twice: no scenario "crash@9" for this job (its reference run has 1 point, 2 in a concurrent scenario, where an autocommit statement commits at a point of its own); the scenarios are: sequential, crash@1, crash@end, duplicate-enqueue, sql-reply-lost@1, overlap@1, concurrent:A2B2, concurrent:ABAB, concurrent:AB2A, concurrent:BA2B, concurrent:BABA, concurrent:B2A2`)
		require.Empty(t, rep.KeptDatabase, "a mistake in the options keeps no database")
	})
	t.Run("unknown token without concurrency", func(t *testing.T) {
		rep := twice.Check(context.Background(), loyaltyJob("ledger", ledgerCTE), twice.Only("crash@9"),
			twice.WithoutConcurrency("the queue locks the order"))
		require.EqualError(t, rep.Err, `twice: no scenario "crash@9" for this job (its reference run has 1 point); the scenarios are: sequential, crash@1, crash@end, duplicate-enqueue, sql-reply-lost@1`)
	})
	t.Run("not a token", func(t *testing.T) {
		rep := twice.Check(context.Background(), loyaltyJob("ledger", ledgerCTE), twice.Only("crash@x"), twice.KeepFailedDatabase())
		require.EqualError(t, rep.Err, `twice: "crash@x" is not a scenario token (tokens look like once, sequential, crash@3, crash@end, duplicate-enqueue, crash-after@2, reply-lost@2, sql-reply-lost@1, redrive-48h@2, overlap@1, concurrent:A2B2A, duplicate-overlap@1, duplicate-concurrent:A2B2A); this job's scenarios are: sequential, crash@1, crash@end, duplicate-enqueue, sql-reply-lost@1, overlap@1, concurrent:A2B2, concurrent:ABAB, concurrent:AB2A, concurrent:BA2B, concurrent:BABA, concurrent:B2A2`)
		require.Empty(t, rep.KeptDatabase)
	})
}

func mismatchStrings(ms []effects.Mismatch) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.String())
	}
	return out
}

func TestSkippedScenariosAreNamedInTheReport(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, loyaltyJob("ledger CTE", ledgerCTE),
		twice.WithoutConcurrency("the queue runs this job under a per-order advisory lock"),
		twice.WithoutDuplicateEnqueue("enqueued in the order's transaction"))
	require.Empty(t, tokens)
	require.Equal(t, []string{"sequential", "crash@1", "crash@end"}, rep.Tokens())
	require.Equal(t, "twice: ledger CTE: idempotent in 3 scenarios (sequential, crash@1, crash@end)\n"+
		"duplicate enqueue not checked: enqueued in the order's transaction\n"+
		"concurrent deliveries not checked: the queue runs this job under a per-order advisory lock", rep.String())
}
