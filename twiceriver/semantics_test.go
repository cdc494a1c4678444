package twiceriver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceriver"
)

// River's semantics as the check plays them, each with a buggy worker the
// check flags and its fixed twin that passes.

var guardedSchema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, name text NOT NULL, points int NOT NULL DEFAULT 0);
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL, status text NOT NULL);
CREATE TABLE rewarded (order_id bigint PRIMARY KEY, tenant text NOT NULL DEFAULT '');
CREATE TABLE invoices (id bigint PRIMARY KEY, email text NOT NULL, email_sent_at timestamptz);`)

var guardedSeed = twice.SeedSQL(
	`INSERT INTO customers (id, name) VALUES (77, 'Ann')`,
	`INSERT INTO orders (id, customer_id, status) VALUES (9812, 77, 'paid')`,
	`INSERT INTO invoices (id, email) VALUES (381, 'billing@spice-route.example')`)

// reward gives the order's points once: the rewarded row is the guard.
func reward(ctx context.Context, tx pgx.Tx, orderID int64, tenant string) (bool, error) {
	tag, err := tx.Exec(ctx, `INSERT INTO rewarded (order_id, tenant) VALUES ($1, $2) ON CONFLICT DO NOTHING`, orderID, tenant)
	if err != nil || tag.RowsAffected() == 0 {
		return false, err
	}
	_, err = tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = (SELECT customer_id FROM orders WHERE id = $1)`, orderID)
	return err == nil, err
}

// SnoozeFirstWorker waits a minute on its first delivery (River's snooze),
// then rewards the order, guarded.
type SnoozeFirstWorker struct {
	river.WorkerDefaults[RewardArgs]
	Pool *pgxpool.Pool
	// ByAttempt tells the first delivery by job.Attempt == 1, which River
	// gives back on every snooze: it snoozes forever. Otherwise by River's
	// "snoozes" count in job.Metadata.
	ByAttempt bool
}

func (w *SnoozeFirstWorker) Work(ctx context.Context, job *river.Job[RewardArgs]) error {
	var meta struct {
		Snoozes int `json:"snoozes"`
	}
	if err := json.Unmarshal(job.Metadata, &meta); err != nil {
		return err
	}
	first := meta.Snoozes == 0
	if w.ByAttempt {
		first = job.Attempt == 1
	}
	if first {
		return river.JobSnooze(time.Minute)
	}
	return pgx.BeginFunc(ctx, w.Pool, func(tx pgx.Tx) error {
		_, err := reward(ctx, tx, job.Args.OrderID, "")
		return err
	})
}

func snoozeJob(byAttempt bool) twiceriver.Job[RewardArgs] {
	return twiceriver.Job[RewardArgs]{Schema: guardedSchema, Seed: guardedSeed, Args: RewardArgs{OrderID: 9812},
		Worker: func(a *twice.Attempt) river.Worker[RewardArgs] {
			return &SnoozeFirstWorker{Pool: a.Pool, ByAttempt: byAttempt}
		}}
}

// A worker that snoozes on its first delivery (River's "snoozes" count is
// 0) and does its guarded work on the next passes with no option: the
// snooze is a delivery, not a failure, on the reference run too.
func TestSnoozeOnFirstDeliveryThenGuardedWorkPasses(t *testing.T) {
	t.Parallel()
	rep := check(t, snoozeJob(false))
	if !rep.OK() {
		t.Fatalf("the worker that snoozes once should pass:\n%s", rep)
	}
	equal(t, "report", rep.String(), "twice: reward_order: idempotent in 7 scenarios (sequential, crash@1, crash@end, duplicate-enqueue, duplicate-overlap@1, duplicate-overlap@2, duplicate-overlap@3)"+noOverlaps+"\n3 crash points not replayed: they leave the same rows, sequences and effects as an earlier one that kept every promise (crash@2, crash@3, crash@4 by crash@1); twice.EveryCrashPoint() replays them")
	first := rep.Reference.Attempts[0]
	equal(t, "the reference run's delivery", []any{first.Err, len(first.Points)}, []any{nil, 4})
}

// The same worker telling its first delivery by job.Attempt == 1 snoozes
// forever: River gives the attempt back on every snooze.
func TestSnoozeByAttemptNeverRunsItsWork(t *testing.T) {
	t.Parallel()
	rep := check(t, snoozeJob(true))
	equal(t, "findings", findings(rep), []string{"once"})
	text := rep.Findings[0].Problems[0].Text
	if !strings.Contains(text, "snoozed 10 times and never ran its work") {
		t.Errorf("the finding should say the job never ran its work; it says:\n%s", text)
	}
}

// tenantKey is where TenantMiddleware puts the tenant.
type tenantKey struct{}

// TenantMiddleware is the application's River middleware: it sets up the
// tenant every worker needs, around every job.
type TenantMiddleware struct{ river.MiddlewareDefaults }

func (*TenantMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	return doInner(context.WithValue(ctx, tenantKey{}, "spice-route"))
}

// TenantWorker rewards the order for the tenant its middleware set up.
type TenantWorker struct {
	river.WorkerDefaults[RewardArgs]
	Pool *pgxpool.Pool
}

func (w *TenantWorker) Work(ctx context.Context, job *river.Job[RewardArgs]) error {
	tenant, ok := ctx.Value(tenantKey{}).(string)
	if !ok {
		return errors.New("no tenant in the context: the tenant middleware did not run")
	}
	return pgx.BeginFunc(ctx, w.Pool, func(tx pgx.Tx) error {
		if _, err := reward(ctx, tx, job.Args.OrderID, tenant); err != nil {
			return err
		}
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
}

func tenantJob(cfg *river.Config) twiceriver.Job[RewardArgs] {
	return twiceriver.Job[RewardArgs]{Schema: guardedSchema, Seed: guardedSeed, Args: RewardArgs{OrderID: 9812}, Config: cfg,
		Worker: func(a *twice.Attempt) river.Worker[RewardArgs] { return &TenantWorker{Pool: a.Pool} }}
}

// A worker whose middleware sets up what Work needs passes when the check
// is given the application's river.Config, and fails its clean run
// without it.
func TestMiddlewareFromTheAppsConfigRunsAroundWork(t *testing.T) {
	t.Parallel()
	rep := check(t, tenantJob(&river.Config{Middleware: []rivertype.Middleware{&TenantMiddleware{}}}))
	if !rep.OK() {
		t.Fatalf("with the app's config the worker should pass:\n%s", rep)
	}
	without := check(t, tenantJob(nil))
	equal(t, "findings without the config", findings(without), []string{"once"})
	if text := without.Findings[0].Problems[0].Text; !strings.Contains(text, "the tenant middleware did not run") {
		t.Errorf("without the config the clean run should fail for want of the tenant; it says:\n%s", text)
	}
}

// PanickyWorker rewards the order; on a redelivery whose reward already
// committed, the buggy one reads a nil map and panics.
type PanickyWorker struct {
	river.WorkerDefaults[RewardArgs]
	Pool  *pgxpool.Pool
	Fixed bool
}

func (w *PanickyWorker) Work(ctx context.Context, job *river.Job[RewardArgs]) error {
	var given bool
	err := pgx.BeginFunc(ctx, w.Pool, func(tx pgx.Tx) error {
		var err error
		given, err = reward(ctx, tx, job.Args.OrderID, "")
		return err
	})
	if err != nil || given || w.Fixed {
		return err
	}
	var lastReward map[int64]int
	lastReward[job.Args.OrderID]++ // assignment to entry in nil map
	return nil
}

func panickyJob(fixed bool) twiceriver.Job[RewardArgs] {
	return twiceriver.Job[RewardArgs]{Schema: guardedSchema, Seed: guardedSeed, Args: RewardArgs{OrderID: 9812},
		InsertOpts: &river.InsertOpts{MaxAttempts: 3},
		Worker: func(a *twice.Attempt) river.Worker[RewardArgs] {
			return &PanickyWorker{Pool: a.Pool, Fixed: fixed}
		}}
}

// River's executor recovers a panic in Work and retries the job like an
// error: the check does the same, and the verdict is what River does next
// (here: retried until MaxAttempts, never succeeding), with the panic and
// its line on the timeline. The fixed twin passes.
func TestPanicIsAFailedAttemptRiverRetries(t *testing.T) {
	t.Parallel()
	rep := check(t, panickyJob(false))
	// crash@end: the reward committed, the crash before River's completion
	// left the job running, and every retry panics until River discards
	// it. (In the sequential scenario the retries panic too, but the
	// scenario's second round of deliveries finds the job discarded and
	// its rows those of one clean run.)
	equal(t, "findings", findings(rep), []string{"crash@end"})
	f := rep.Findings[0]
	equal(t, "problem", fmt.Sprint(f.Problems[0].Kind), fmt.Sprint(twice.ProblemGaveUp))
	if !strings.Contains(f.Timeline, "panic: assignment to entry in nil map at semantics_test.go:") {
		t.Errorf("the timeline should show the panic and its line:\n%s", f.Timeline)
	}
	if fixed := check(t, panickyJob(true)); !fixed.OK() {
		t.Errorf("the fixed twin should pass:\n%s", fixed)
	}
}

// InvoiceWorker claims the invoice (guarded) and completes the job in the
// same transaction, then sends the email: a crash after that commit loses
// the email, and River does not run the job again.
type InvoiceWorker struct {
	river.WorkerDefaults[InvoiceArgs]
	Pool   *pgxpool.Pool
	Mailer *effects.Mailer
}

// InvoiceArgs emails an invoice.
type InvoiceArgs struct {
	InvoiceID int64 `json:"invoice_id"`
}

func (InvoiceArgs) Kind() string { return "invoice_email" }

func (w *InvoiceWorker) Work(ctx context.Context, job *river.Job[InvoiceArgs]) error {
	claimed := false
	err := pgx.BeginFunc(ctx, w.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE invoices SET email_sent_at = now() WHERE id = $1 AND email_sent_at IS NULL`, job.Args.InvoiceID)
		if err != nil {
			return err
		}
		claimed = tag.RowsAffected() == 1
		_, err = river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
	if err != nil || !claimed {
		return err
	}
	return w.Mailer.Send(ctx, effects.Email{To: "billing@spice-route.example", Subject: fmt.Sprintf("Invoice %d", job.Args.InvoiceID)})
}

// The email after river.JobCompleteTx is lost by a crash after the
// commit; the headline says what happened (the job completed, River did
// not run it again, the email lost), as the timeline does, and River's
// completion is labelled river.JobCompleteTx, not by its SQL.
func TestEmailAfterJobCompleteTxHeadlineSaysTheJobCompletedAndTheEmailWasLost(t *testing.T) {
	t.Parallel()
	rep := twiceriver.Check(t.Context(), twiceriver.Job[InvoiceArgs]{Schema: guardedSchema, Seed: guardedSeed, Args: InvoiceArgs{InvoiceID: 381},
		Worker: func(a *twice.Attempt) river.Worker[InvoiceArgs] {
			return &InvoiceWorker{Pool: a.Pool, Mailer: a.Mailer}
		}})
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	var f *twice.Finding
	for i := range rep.Findings {
		if rep.Findings[i].Token == "crash@5" {
			f = &rep.Findings[i]
		}
	}
	if f == nil {
		t.Fatalf("crash@5 (after the commit, before the email) should be flagged:\n%s", rep)
	}
	equal(t, "headline", f.Headline, "not idempotent: crash before point 5 of 5 (email to billing@spice-route.example: Invoice 381); the job had been completed in the worker's transaction (river.JobCompleteTx), so River did not run it again: what came after that commit, from point 5 on, was lost")
	if strings.Contains(f.Timeline, "-- name:") || !strings.Contains(f.Timeline, "river.JobCompleteTx") {
		t.Errorf("River's completion should be labelled river.JobCompleteTx on the timeline:\n%s", f.Timeline)
	}
	// Its fixed twin: the email is at most once by design, and the check is
	// told so.
	fixed := twiceriver.Check(t.Context(), twiceriver.Job[InvoiceArgs]{Schema: guardedSchema, Seed: guardedSeed, Args: InvoiceArgs{InvoiceID: 381},
		Worker: func(a *twice.Attempt) river.Worker[InvoiceArgs] {
			return &InvoiceWorker{Pool: a.Pool, Mailer: a.Mailer}
		}},
		twice.EffectPolicy("email", effects.AtMostOnce))
	if !fixed.OK() {
		t.Errorf("with the email at most once the worker should pass:\n%s", fixed)
	}
}

// MetadataWorker fails when job.Metadata holds anything the producer and
// River did not write (River's own keys are "snoozes" and "river:…").
type MetadataWorker struct {
	river.WorkerDefaults[RewardArgs]
	Pool *pgxpool.Pool
}

func (w *MetadataWorker) Work(ctx context.Context, job *river.Job[RewardArgs]) error {
	var meta map[string]any
	if err := json.Unmarshal(job.Metadata, &meta); err != nil {
		return err
	}
	for k := range meta {
		if k != "source" && !strings.HasPrefix(k, "river:") && k != "snoozes" {
			return fmt.Errorf("metadata neither the producer nor River wrote: %s", job.Metadata)
		}
	}
	if meta["source"] != "checkout" {
		return fmt.Errorf("the producer's metadata is missing: %s", job.Metadata)
	}
	return pgx.BeginFunc(ctx, w.Pool, func(tx pgx.Tx) error {
		if _, err := reward(ctx, tx, job.Args.OrderID, ""); err != nil {
			return err
		}
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
}

// The check's bookkeeping is invisible to the worker: job.Metadata holds
// only what the producer wrote.
func TestJobMetadataHoldsOnlyWhatTheProducerWrote(t *testing.T) {
	t.Parallel()
	rep := check(t, twiceriver.Job[RewardArgs]{Schema: guardedSchema, Seed: guardedSeed, Args: RewardArgs{OrderID: 9812},
		InsertOpts: &river.InsertOpts{Metadata: []byte(`{"source": "checkout"}`), UniqueOpts: river.UniqueOpts{ByArgs: true}},
		Worker:     func(a *twice.Attempt) river.Worker[RewardArgs] { return &MetadataWorker{Pool: a.Pool} }})
	if !rep.OK() {
		t.Fatalf("the worker should see only the producer's metadata:\n%s", rep)
	}
}

// River's statements on a timeline are named by what they are: the
// follow-up's insert by its kind, the completion as river.JobCompleteTx.
func TestRiversStatementsAreNamedOnTheTimeline(t *testing.T) {
	t.Parallel()
	rep := check(t, rewardJob(RewardWorker{FollowUpOutside: true, CompleteInTx: true}), twice.Only("crash@5"))
	equal(t, "findings", findings(rep), []string{"crash@5"})
	tl := rep.Findings[0].Timeline
	for _, want := range []string{"River's insert of points_email (client.Insert or InsertTx)", "river.JobCompleteTx (the job's completion)"} {
		if !strings.Contains(tl, want) {
			t.Errorf("the timeline should name %q:\n%s", want, tl)
		}
	}
	if strings.Contains(tl, "-- name:") {
		t.Errorf("the timeline shows sqlc's query names:\n%s", tl)
	}
}

// River's snooze bookkeeping is not the worker's: the snoozing worker's
// reference run shows only its own statements.
func TestSnoozesAreNotPointsOfTheWorker(t *testing.T) {
	t.Parallel()
	rep := check(t, snoozeJob(true))
	equal(t, "findings", findings(rep), []string{"once"})
	if pts := rep.Reference.Attempts[0].Points; len(pts) != 0 {
		t.Errorf("a worker that only snoozes has no points; got %v", pts)
	}
}
