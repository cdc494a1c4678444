package twice_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/longtest"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The points ledger without the unique constraint: nothing in the database
// stops a second reward.
var ledgerNoUniqueSchema = pgfixture.SQL(`
CREATE TABLE customers (
  id     bigint PRIMARY KEY,
  name   text   NOT NULL,
  points int    NOT NULL DEFAULT 0
);
CREATE TABLE points_ledger (
  id          bigserial PRIMARY KEY,
  customer_id bigint NOT NULL,
  order_id    bigint NOT NULL,
  reason      text   NOT NULL,
  points      int    NOT NULL
);`)

func ledgerNoUniqueJob(name string, run func(ctx context.Context, a *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: ledgerNoUniqueSchema, Seed: loyaltySeed, Run: run}
}

// The first document's "check, then act": SELECT, then UPDATE the balance
// and INSERT the ledger row, in one transaction.
func checkThenAct(ctx context.Context, a *twice.Attempt) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		var already bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM points_ledger WHERE order_id = $1 AND reason = 'order_reward')`, 9812).Scan(&already); err != nil || already {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = $1`, 77); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO points_ledger (customer_id, order_id, reason, points) VALUES ($1, $2, 'order_reward', 50)`, 77, 9812)
		return err
	})
}

// Read-modify-write in Go: read the balance, add in Go, write it back. With
// forUpdate the read locks the row, so the second attempt waits for the
// first to commit and then sees its ledger row.
func readModifyWrite(forUpdate bool) func(ctx context.Context, a *twice.Attempt) error {
	read := `SELECT points FROM customers WHERE id = $1`
	if forUpdate {
		read += ` FOR UPDATE`
	}
	return func(ctx context.Context, a *twice.Attempt) error {
		return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
			var points int
			if err := tx.QueryRow(ctx, read, 77).Scan(&points); err != nil {
				return err
			}
			var already bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM points_ledger WHERE order_id = $1 AND reason = 'order_reward')`, 9812).Scan(&already); err != nil || already {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE customers SET points = $2 WHERE id = $1`, 77, points+50); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO points_ledger (customer_id, order_id, reason, points) VALUES ($1, $2, 'order_reward', 50)`, 77, 9812)
			return err
		})
	}
}

// The second document's invoice job: check, then the guarded update, and
// send only when this attempt's update marked the invoice.
func guardedInvoice(ctx context.Context, a *twice.Attempt) error {
	var sent bool
	if err := a.Pool.QueryRow(ctx, `SELECT email_sent_at IS NOT NULL FROM invoices WHERE id = $1`, 381).Scan(&sent); err != nil || sent {
		return err
	}
	tag, err := a.Pool.Exec(ctx, `UPDATE invoices SET email_sent_at = now() WHERE id = $1 AND email_sent_at IS NULL`, 381)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	return a.Mailer.Send(ctx, effects.Email{To: "billing@example.com", Subject: "Invoice 381"})
}

// Its unguarded twin: check, mark, send; two workers that both checked
// before either marked both send.
func unguardedInvoice(ctx context.Context, a *twice.Attempt) error {
	var sent bool
	if err := a.Pool.QueryRow(ctx, `SELECT email_sent_at IS NOT NULL FROM invoices WHERE id = $1`, 381).Scan(&sent); err != nil || sent {
		return err
	}
	if _, err := a.Pool.Exec(ctx, `UPDATE invoices SET email_sent_at = now() WHERE id = $1`, 381); err != nil {
		return err
	}
	return a.Mailer.Send(ctx, effects.Email{To: "billing@example.com", Subject: "Invoice 381"})
}

var invoiceOpts = []twice.Option{
	twice.Normalize("invoices.email_sent_at", setOrNull),
	// mark, then send: a crash in between loses the email, which the job
	// chose over a duplicate.
	twice.EffectPolicy("email", effects.AtMostOnce),
}

// concurrentFindings returns the tokens of the concurrent scenarios that
// broke a promise, and of those that ran.
func concurrentFindings(rep *twice.Report) (found, ran []string) {
	for _, f := range rep.Findings {
		if isConcurrent(f.Token) {
			found = append(found, f.Token)
		}
	}
	for _, t := range rep.Tokens() {
		if isConcurrent(t) {
			ran = append(ran, t)
		}
	}
	return found, ran
}

// withoutConcurrent keeps the tokens of the sequential scenarios.
func withoutConcurrent(tokens []string) []string {
	var out []string
	for _, t := range tokens {
		if !isConcurrent(t) {
			out = append(out, t)
		}
	}
	return out
}

func isConcurrent(t string) bool {
	return strings.HasPrefix(t, "concurrent:") || strings.HasPrefix(t, "overlap@")
}

func sqlState(err error) string {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code
	}
	return ""
}

func check(t *testing.T, job twice.Job, opts ...twice.Option) *twice.Report {
	t.Helper()
	rep := twice.Check(context.Background(), job, opts...)
	require.NoError(t, rep.Err)
	return rep
}

// The check-then-act job is caught by the same interleaving every run, with
// the same report: the scheduler decides, not luck.
func TestCheckThenActIsFlaggedInEveryRun(t *testing.T) {
	t.Parallel()
	job := ledgerNoUniqueJob("ledger: check, then act", checkThenAct)
	first := check(t, job)
	found, _ := concurrentFindings(first)
	require.Equal(t, []string{"overlap@2"}, found, first.String())
	require.Len(t, first.Findings, 1, "the sequential scenarios pass: only running at once breaks it")
	text := first.String()
	require.Contains(t, text, "not idempotent: overlap after point 2 of 5")
	require.Contains(t, text, "+ (customer_id=77, order_id=9812, reason='order_reward', points=50)")
	longtest.Skip(t, "one run, not fifty")
	// Fifty whole checks (each on its own database), five at a time.
	reports := make([]string, 50)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 5)
	for i := range reports {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			rep := twice.Check(context.Background(), job)
			reports[i] = rep.String()
		})
	}
	wg.Wait()
	for i, r := range reports {
		require.Equal(t, text, r, "run %d of 50", i+1)
	}
}

// With the unique constraint the same code passes: the racing loser fails on
// the unique violation, is redelivered, sees the row and skips.
func TestCheckThenActWithUniqueConstraintPasses(t *testing.T) {
	t.Parallel()
	job := loyaltyJob("ledger: check, then act, unique", checkThenAct)
	rep := check(t, job, twice.ExploreAllInterleavings())
	require.True(t, rep.OK(), rep.String())
	_, ran := concurrentFindings(rep)
	require.Contains(t, ran, "overlap@2")

	// Both check, A updates; B's update waits for A's row lock; A inserts and
	// commits; B's update goes on, its insert hits the unique constraint.
	const race = "concurrent:A2B2ABA2B2"
	rep = check(t, job, twice.Only(race))
	require.True(t, rep.OK(), rep.String())
	require.Equal(t, []string{race}, rep.Tokens())
	atts := rep.Scenarios[0].Attempts
	require.Len(t, atts, 3, "A, B, and B's redelivery")
	require.NoError(t, atts[0].Err)
	require.Equal(t, "23505", sqlState(atts[1].Err), "B lost on the unique violation: %v", atts[1].Err)
	require.NoError(t, atts[2].Err)
	require.Len(t, atts[2].Points, 3, "the redelivery: BEGIN, the check that finds the row, COMMIT")
	tl, ok := rep.Timeline(race)
	require.True(t, ok)
	require.Contains(t, tl, "... blocked on A")
	require.Contains(t, tl, "then redelivered, one after the other:\n    attempt 3 of job-1:")
}

// The first document's fix passes every interleaving, including the one
// where both inserts race and the loser waits on the winner's unique index.
func TestLedgerCTEPassesEveryInterleaving(t *testing.T) {
	t.Parallel()
	rep := check(t, loyaltyJob("ledger CTE", ledgerCTE), twice.ExploreAllInterleavings())
	require.True(t, rep.OK(), rep.String())
	_, ran := concurrentFindings(rep)
	require.Equal(t, []string{"overlap@1", "concurrent:A2B2", "concurrent:BABA", "concurrent:B2A2"}, ran, "the autocommit CTE is two points, its statement and its commit")

	rep = check(t, loyaltyJob("ledger CTE in a transaction", ledgerCTETx), twice.ExploreAllInterleavings())
	require.True(t, rep.OK(), rep.String())
	_, ran = concurrentFindings(rep)
	raced := false
	for _, tok := range ran {
		tl, _ := rep.Timeline(tok)
		if strings.Contains(tl, "... blocked on") {
			raced = true
		}
	}
	require.True(t, raced, "some interleaving has the loser wait on the winner's insert: %v", ran)
	const race = "concurrent:ABABAB"
	rep = check(t, loyaltyJob("ledger CTE in a transaction", ledgerCTETx), twice.Only(race))
	require.True(t, rep.OK(), rep.String())
	tl, _ := rep.Timeline(race)
	require.Contains(t, tl, "|   2  WITH added AS")
	require.Contains(t, tl, "|      ... blocked on A")
	require.Len(t, rep.Scenarios[0].Attempts, 2, "nobody failed: the loser did nothing")
}

func ledgerCTETx(ctx context.Context, a *twice.Attempt) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, ledgerCTESQL, 77, 9812)
		return err
	})
}

// The second document's guarded update never sends twice; without the guard
// two workers that both checked both send.
func TestGuardedInvoiceNeverSendsTwice(t *testing.T) {
	t.Parallel()
	opts := append([]twice.Option{twice.ExploreAllInterleavings()}, invoiceOpts...)
	rep := check(t, ordersJob("invoice: guarded update", guardedInvoice), opts...)
	require.True(t, rep.OK(), rep.String())
	_, ran := concurrentFindings(rep)
	require.NotEmpty(t, ran)

	rep = check(t, ordersJob("invoice: unguarded update", unguardedInvoice), invoiceOpts...)
	found, _ := concurrentFindings(rep)
	require.Equal(t, []string{"overlap@1"}, found, rep.String())
	require.Len(t, rep.Findings, 1, "one at a time, the unguarded job is fine")
	require.Equal(t, []string{`email billing@example.com "Invoice 381": want 1, got 2 (at-most-once)`}, mismatchStrings(rep.Findings[0].Effects))
}

// Read, add in Go, write back: a lost update under READ COMMITTED (the
// balance says one reward, the ledger two); SELECT ... FOR UPDATE fixes it.
func TestReadModifyWriteLostUpdate(t *testing.T) {
	t.Parallel()
	rep := check(t, ledgerNoUniqueJob("read-modify-write", readModifyWrite(false)))
	found, _ := concurrentFindings(rep)
	require.Len(t, rep.Findings, 1, rep.String())
	require.Len(t, found, 1, rep.String())
	d := rep.Findings[0].Database
	require.Len(t, d, 1, "the balance is 50 as after one run: the second write overwrote the first")
	require.Equal(t, "points_ledger", d[0].Table)

	rep = check(t, ledgerNoUniqueJob("read-modify-write, FOR UPDATE", readModifyWrite(true)), twice.ExploreAllInterleavings())
	require.True(t, rep.OK(), rep.String())
}

// SERIALIZABLE turns the check-then-act race into a serialization failure;
// the loser is redelivered and sees the row.
func TestCheckThenActUnderSerializablePasses(t *testing.T) {
	t.Parallel()
	job := ledgerNoUniqueJob("ledger: check, then act", checkThenAct)
	for _, iso := range []twice.IsolationLevel{twice.Serializable, twice.RepeatableRead} {
		rep := check(t, job, twice.Isolation(iso), twice.ExploreAllInterleavings())
		require.True(t, rep.OK(), "%s: %s", iso, rep.String())
	}
	rep := check(t, job, twice.Isolation(twice.Serializable), twice.Only("overlap@2"))
	require.True(t, rep.OK(), rep.String())
	atts := rep.Scenarios[0].Attempts
	require.Len(t, atts, 3, "A, B, A's redelivery")
	require.Equal(t, "40001", sqlState(atts[0].Err), "A's update after B committed: %v", atts[0].Err)
	require.NoError(t, atts[1].Err)
	require.NoError(t, atts[2].Err)
	tl, _ := rep.Timeline("overlap@2")
	require.Contains(t, tl, "timeline (schedule A2B5A2, SERIALIZABLE):")
}

// A token replays the same interleaving and the same report, every time:
// four whole checks, each on its own database, at once; twenty, four at a
// time, with the long tests.
func TestSameTokenSameReport(t *testing.T) {
	t.Parallel()
	job := ledgerNoUniqueJob("ledger: check, then act", checkThenAct)
	const token = "concurrent:A2B2ABA2B3"
	reports := make([]string, 4)
	if longtest.Enabled() {
		reports = make([]string, 20)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := range reports {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			reports[i] = twice.Check(context.Background(), job, twice.Only(token), twice.TestName("TestRewardOrder")).String()
		})
	}
	wg.Wait()
	for i, r := range reports {
		require.Equal(t, reports[0], r, "replay %d", i+1)
	}
	golden(t, "concurrent_check_then_act.txt", reports[0]+"\n")
}

// stuckMu is held across a point: the second attempt waits for it in Go,
// where no database can see it.
var stuckMu sync.Mutex

func holdsMutexAcrossPoint(ctx context.Context, a *twice.Attempt) error {
	stuckMu.Lock()
	defer stuckMu.Unlock()
	_, err := a.Pool.Exec(ctx, `SELECT 1`)
	return err
}

// slot is a one-place semaphore held across a point; the second attempt
// waits for it on a channel (giving up when its context is cancelled).
var slot = make(chan struct{}, 1)

func holdsSlotAcrossPoint(ctx context.Context, a *twice.Attempt) error {
	select {
	case slot <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-slot }()
	_, err := a.Pool.Exec(ctx, `SELECT 1`)
	return err
}

func TestStuckOutsidePostgresIsReported(t *testing.T) {
	t.Parallel()
	t.Run("mutex", func(t *testing.T) {
		rep := check(t, loyaltyJob("holds a mutex", holdsMutexAcrossPoint), twice.AttemptTimeout(2*time.Second), twice.Only("concurrent:AB"))
		require.Len(t, rep.Findings, 1, rep.String())
		f := rep.Findings[0]
		require.Equal(t, "an attempt is stuck: concurrent: two deliveries of the same job at once, interleaved AB (A is the first delivery, B the second)", f.Headline)
		require.Equal(t, []string{"attempt 2 of job-1 (B) is stuck outside PostgreSQL: for 2s (AttemptTimeout) it reached no point, did not return and waited on no lock of the other attempt (a mutex, a channel or a sleep shared between attempts?); where the attempts were:\n" +
			"    attempt 1 of job-1 (A): waiting for the scheduler before point 1 (SELECT 1)\n" +
			"    attempt 2 of job-1 (B): running before its first point\n" +
			"  the check crashed both attempts (connections cut, contexts cancelled) and did not redeliver"}, problems(f))
	})
	t.Run("channel", func(t *testing.T) {
		rep := check(t, loyaltyJob("holds a slot", holdsSlotAcrossPoint), twice.AttemptTimeout(2*time.Second))
		require.Len(t, rep.Findings, 1, rep.String())
		f := rep.Findings[0]
		require.Equal(t, "overlap@1", f.Token, "the first scenario: stuck before the first decision")
		require.Contains(t, f.Problems[0].Text, "attempt 2 of job-1 (B) is stuck outside PostgreSQL")
		require.Contains(t, f.Problems[0].Text, "attempt 1 of job-1 (A): waiting for the scheduler before point 1 (SELECT 1)")
		require.Contains(t, f.Timeline, "STUCK (outside PostgreSQL)")
		require.Contains(t, rep.String(), "replay: TWICE_RUN=overlap@1")
	})
}

func TestUnknownConcurrentToken(t *testing.T) {
	t.Parallel()
	job := loyaltyJob("ledger: check, then act, unique", checkThenAct)
	rep := twice.Check(context.Background(), job, twice.Only("overlap@9"))
	require.EqualError(t, rep.Err, `twice: no concurrent scenario "overlap@9" for this job: its reference run has 5 points, so the overlaps are overlap@1 to overlap@4`)
	rep = twice.Check(context.Background(), job, twice.Only("concurrent:AxB"))
	require.ErrorContains(t, rep.Err, `twice: no concurrent scenario "concurrent:AxB": concurrent: bad schedule token "AxB" at offset 1`)
	rep = twice.Check(context.Background(), job, twice.Only("concurrent:ABC"))
	require.EqualError(t, rep.Err, `twice: no concurrent scenario "concurrent:ABC": the concurrent scenarios run two attempts, A and B`)
}

// The budget decides between every interleaving and PCT samples.
func TestBudgetBoundsTheExploration(t *testing.T) {
	t.Parallel()
	job := loyaltyJob("ledger: check, then act, unique", checkThenAct) // 5 points: C(10,5) = 252
	tiny := twice.Budget{Name: "tiny", Interleavings: 5, Depth: 2}
	rep := check(t, job, twice.WithBudget(tiny), twice.ExploreAllInterleavings())
	require.True(t, rep.OK(), rep.String())
	_, ran := concurrentFindings(rep)
	require.LessOrEqual(t, len(ran), 4+5, "4 overlaps, at most 5 samples")
	again := check(t, job, twice.WithBudget(tiny), twice.ExploreAllInterleavings())
	require.Equal(t, rep.Tokens(), again.Tokens(), "the samples are seeded")
}

// lockUpgrade reads the customer FOR SHARE, then records the reward and
// updates the balance: two attempts that both hold the share lock deadlock
// when each wants to write.
func lockUpgrade(ctx context.Context, a *twice.Attempt) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		var points int
		if err := tx.QueryRow(ctx, `SELECT points FROM customers WHERE id = $1 FOR SHARE`, 77).Scan(&points); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO points_ledger (customer_id, order_id, reason, points)
VALUES ($1, $2, 'order_reward', 50) ON CONFLICT (order_id, reason) DO NOTHING`, 77, 9812)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = $1`, 77)
		return err
	})
}

// A deadlock is PostgreSQL's to break: one attempt fails with 40P01, the
// queue redelivers it, and the job still ends as after one run.
func TestDeadlockLoserIsRedelivered(t *testing.T) {
	t.Parallel()
	// Both take the share lock; A inserts; B's insert waits for A's; A's
	// update waits for B's share lock: a cycle.
	const token = "concurrent:A2B2ABA"
	rep := check(t, loyaltyJob("lock upgrade", lockUpgrade), twice.Only(token))
	require.True(t, rep.OK(), rep.String())
	atts := rep.Scenarios[0].Attempts
	require.Len(t, atts, 3, "A, B, the loser's redelivery")
	states := []string{sqlState(atts[0].Err), sqlState(atts[1].Err)}
	require.ElementsMatch(t, []string{"40P01", ""}, states, "one of them lost the deadlock: %v, %v", atts[0].Err, atts[1].Err)
	require.NoError(t, atts[2].Err)
	tl, _ := rep.Timeline(token)
	require.Contains(t, tl, "... blocked on A")
	require.Contains(t, tl, "... blocked on B")
}
