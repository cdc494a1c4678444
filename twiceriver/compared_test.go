package twiceriver_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceriver"
)

// appSchema keeps the application's tables in a schema of their own, beside
// a migration tool's bookkeeping table in public.
var appSchema = pgfixture.SQL(`
CREATE SCHEMA app;
CREATE TABLE app.ledger (order_id bigint PRIMARY KEY, points int NOT NULL);
CREATE TABLE goose_db_version (id serial PRIMARY KEY, version_id bigint NOT NULL, is_applied boolean NOT NULL, tstamp timestamp);
INSERT INTO goose_db_version (version_id, is_applied, tstamp) VALUES (0, true, now()), (1, true, now());`)

// LedgerWorker books an order's points once (ON CONFLICT) and enqueues the
// points email: with InsertTx in the booking's transaction, or (Outside)
// with Insert before it, so that a crash inside the transaction enqueues the
// email again.
type LedgerWorker struct {
	river.WorkerDefaults[RewardArgs]
	Pool    *pgxpool.Pool
	Outside bool
}

func (w *LedgerWorker) Work(ctx context.Context, job *river.Job[RewardArgs]) error {
	client := river.ClientFromContext[pgx.Tx](ctx)
	email := PointsEmailArgs{CustomerID: 77, OrderID: job.Args.OrderID}
	if w.Outside {
		if _, err := client.Insert(ctx, email, nil); err != nil {
			return err
		}
	}
	tx, err := w.Pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `INSERT INTO app.ledger (order_id, points) VALUES ($1, 50) ON CONFLICT DO NOTHING`, job.Args.OrderID); err != nil {
		return err
	}
	if !w.Outside {
		if _, err := client.InsertTx(ctx, tx, email, nil); err != nil {
			return err
		}
	}
	if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func ledgerJob(outside bool) twiceriver.Job[RewardArgs] {
	return twiceriver.Job[RewardArgs]{
		Schema: appSchema, Args: RewardArgs{OrderID: 9812},
		Worker: func(a *twice.Attempt) river.Worker[RewardArgs] { return &LedgerWorker{Pool: a.Pool, Outside: outside} },
	}
}

// Schemas("app") narrows the application's tables to app, but River's
// river_job is still compared (the email enqueued twice is found), and
// goose's bookkeeping table is not compared at all.
func TestSchemasStillComparesRiverJobAndNeverTheMigrationTable(t *testing.T) {
	t.Parallel()
	rep := check(t, ledgerJob(true), twice.Schemas("app"))
	equal(t, "tables compared", rep.Reference.Snapshot.Tables(), []string{"app.ledger", "river_job"})
	if len(rep.Findings) == 0 {
		t.Fatalf("the email enqueued outside the transaction is not flagged:\n%s", rep)
	}
	equal(t, "diff", pgfixture.FormatDiff(rep.Findings[0].Database), `river_job:
  + (state='available', max_attempts=25, priority=1, args={"order_id": 9812, "customer_id": 77}, kind='points_email', queue='default', tags={}, unique_key=NULL, unique_states=NULL)
`)
	fixed := check(t, ledgerJob(false), twice.Schemas("app"))
	if !fixed.OK() {
		t.Fatalf("the email enqueued in the transaction is flagged:\n%s", fixed)
	}
}
