package twiceriver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceriver"
)

// BonusArgs grants an order's bonus. It has no UniqueOpts: a producer that
// retried an insert that had worked leaves two jobs, and River runs them on
// two workers at once.
type BonusArgs struct {
	OrderID int64 `json:"order_id"`
}

func (BonusArgs) Kind() string { return "grant_bonus" }

// BonusWorker checks whether the order's bonus was granted, then grants it
// (records it, adds the points, completes the job) in a transaction: check
// then act, in separate statements, keyed by the job's args.
type BonusWorker struct {
	river.WorkerDefaults[BonusArgs]
	Pool *pgxpool.Pool
}

func (w *BonusWorker) Work(ctx context.Context, job *river.Job[BonusArgs]) error {
	var granted bool
	if err := w.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM bonuses WHERE order_id = $1)`, job.Args.OrderID).Scan(&granted); err != nil {
		return err
	}
	if granted {
		return nil
	}
	tx, err := w.Pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `INSERT INTO bonuses (order_id) VALUES ($1)`, job.Args.OrderID); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE customers SET points = points + 10 WHERE id = 77`); err != nil {
		return err
	}
	if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func bonusJob(bonuses string) twiceriver.Job[BonusArgs] {
	return twiceriver.Job[BonusArgs]{
		Schema: pgfixture.SQL(`CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);`, bonuses),
		Seed:   twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`),
		Args:   BonusArgs{OrderID: 9812},
		Worker: func(a *twice.Attempt) river.Worker[BonusArgs] { return &BonusWorker{Pool: a.Pool} },
	}
}

// Two copies of the job at once both see no bonus and both grant it: the
// sequential duplicate enqueue passes (the second copy sees the first's
// bonus), the concurrent one is flagged. With a unique constraint on the
// order the second copy's insert fails, River retries it, and it sees the
// bonus: every scenario passes.
func TestCheckThenActByArgsIsFlaggedByAConcurrentDuplicate(t *testing.T) {
	t.Parallel()
	rep := checkBonus(t, bonusJob(`CREATE TABLE bonuses (order_id bigint NOT NULL)`))
	got := findings(rep)
	if len(got) == 0 || !strings.HasPrefix(got[0], "duplicate-overlap@") {
		t.Fatalf("flagged by %v, want a concurrent duplicate first:\n%s", got, rep)
	}
	for _, tok := range got {
		if !strings.HasPrefix(tok, "duplicate-overlap@") {
			t.Errorf("flagged by %s: only the concurrent duplicate races", tok)
		}
	}
	f := rep.Findings[0]
	if !strings.Contains(f.Headline, "the producer enqueued the job twice and two workers took both copies at once") {
		t.Errorf("headline: %s", f.Headline)
	}
	equal(t, "diff", pgfixture.FormatDiff(f.Database), `bonuses:
  + (order_id=9812)
customers:
  - (id=77, points=10)
  + (id=77, points=20)
`)
	if !strings.Contains(f.Timeline, "job-2") {
		t.Errorf("the timeline does not show the second copy:\n%s", f.Timeline)
	}
	replay := checkBonus(t, bonusJob(`CREATE TABLE bonuses (order_id bigint NOT NULL)`), twice.Only(f.Token))
	equal(t, "replay", findings(replay), []string{f.Token})

	fixed := checkBonus(t, bonusJob(`CREATE TABLE bonuses (order_id bigint PRIMARY KEY)`))
	if !fixed.OK() {
		t.Fatalf("the bonus keyed by a unique constraint is flagged:\n%s", fixed)
	}
	if !strings.Contains(fixed.String(), "duplicate-overlap@1") {
		t.Errorf("the concurrent duplicates did not play:\n%s", fixed)
	}
}

func checkBonus(t *testing.T, job twiceriver.Job[BonusArgs], opts ...twice.Option) *twice.Report {
	t.Helper()
	rep := twiceriver.Check(t.Context(), job, opts...)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	return rep
}
