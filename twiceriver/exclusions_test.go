package twiceriver_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceriver"
)

// A stamps worker whose args are not unique: the duplicate-enqueue
// scenario inserts a second river_job row of it. That row is the queue's
// bookkeeping of the job under check, never compared, whatever else is
// left out: the follow-ups' rule (Job.Workers) and the user's own
// ExcludeRows on river_job add to it.

var stampsSchema = pgfixture.SQL(`
CREATE TABLE stamps (order_id bigint PRIMARY KEY, n int NOT NULL, announced bool NOT NULL DEFAULT false);`)

// StampArgs gives an order its loyalty stamps (no UniqueOpts: a
// producer's duplicate insert is a second job).
type StampArgs struct {
	OrderID int64 `json:"order_id"`
}

func (StampArgs) Kind() string { return "stamp_order" }

// StampNoticeArgs is the follow-up: announce the stamps, once per order
// (UniqueOpts by args).
type StampNoticeArgs struct {
	OrderID int64 `json:"order_id"`
}

func (StampNoticeArgs) Kind() string { return "stamp_notice" }

func (StampNoticeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// StampPingArgs is an analytics ping with no worker in the application's
// bundle: it stays a row, one per run of the stamps job.
type StampPingArgs struct {
	OrderID int64 `json:"order_id"`
}

func (StampPingArgs) Kind() string { return "stamp_ping" }

// StampWorker stamps the order, enqueues its notice and completes the job
// in one transaction. Guarded, the stamp is inserted once per order (ON
// CONFLICT DO NOTHING); unguarded, every run adds 10.
type StampWorker struct {
	river.WorkerDefaults[StampArgs]
	A       *twice.Attempt
	Guarded bool
	Ping    bool // also enqueue a StampPingArgs
}

func (w *StampWorker) Work(ctx context.Context, job *river.Job[StampArgs]) error {
	client := river.ClientFromContext[pgx.Tx](ctx)
	tx, err := w.A.Pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	q := `INSERT INTO stamps (order_id, n) VALUES ($1, 10) ON CONFLICT (order_id) DO UPDATE SET n = stamps.n + 10`
	if w.Guarded {
		q = `INSERT INTO stamps (order_id, n) VALUES ($1, 10) ON CONFLICT (order_id) DO NOTHING`
	}
	if _, err := tx.Exec(ctx, q, job.Args.OrderID); err != nil {
		return err
	}
	if _, err := client.InsertTx(ctx, tx, StampNoticeArgs(job.Args), nil); err != nil {
		return err
	}
	if w.Ping {
		if _, err := client.InsertTx(ctx, tx, StampPingArgs(job.Args), nil); err != nil {
			return err
		}
	}
	if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// StampNoticeWorker marks the order's stamps announced.
type StampNoticeWorker struct {
	river.WorkerDefaults[StampNoticeArgs]
	A *twice.Attempt
}

func (w *StampNoticeWorker) Work(ctx context.Context, job *river.Job[StampNoticeArgs]) error {
	_, err := w.A.Pool.Exec(ctx, `UPDATE stamps SET announced = true WHERE order_id = $1`, job.Args.OrderID)
	return err
}

// stampJob is the stamps worker with the application's Workers (the
// notice's worker; the ping has none).
func stampJob(w StampWorker) twiceriver.Job[StampArgs] {
	return twiceriver.Job[StampArgs]{
		Schema: stampsSchema, Args: StampArgs{OrderID: 9812},
		Worker: func(a *twice.Attempt) river.Worker[StampArgs] { w.A = a; return &w },
		Workers: func(a *twice.Attempt) *river.Workers {
			ws := river.NewWorkers()
			river.AddWorker[StampArgs](ws, &StampWorker{A: a, Guarded: w.Guarded, Ping: w.Ping})
			river.AddWorker[StampNoticeArgs](ws, &StampNoticeWorker{A: a})
			return ws
		},
	}
}

// A guarded worker given Job.Workers passes: the copy the duplicate-enqueue
// scenario inserted is River's row of the job under check, not "the job was
// inserted twice", with the follow-ups' rule beside it.
func TestWorkersLeaveTheDuplicatesRowOut(t *testing.T) {
	t.Parallel()
	rep := check2(t, stampJob(StampWorker{Guarded: true}), followUpOptions...)
	if !rep.OK() {
		t.Fatal(rep.String())
	}
	if !slices.Contains(rep.Tokens(), "duplicate-enqueue") {
		t.Fatalf("no duplicate-enqueue scenario: %v", rep.Tokens())
	}
}

// The user's own ExcludeRows on river_job (the pings, whose duplicates the
// application accepts) adds to the adapter's rules: the job's own rows and
// the duplicate's copy stay out, and so do the pings.
func TestUsersExcludeRowsOnRiverJobAddsToTheAdapters(t *testing.T) {
	t.Parallel()
	job := stampJob(StampWorker{Guarded: true, Ping: true})
	opts := append(followUpOptions[:len(followUpOptions):len(followUpOptions)], twice.Only("duplicate-enqueue"))
	rep := check2(t, job, append(opts, twice.ExcludeRows("river_job", "kind = 'stamp_ping'"))...)
	if !rep.OK() {
		t.Fatal(rep.String())
	}
	// Without the user's rule the second ping is a difference: the rule is
	// what lets it pass, the adapter's rules still apply beside it.
	rep = check2(t, job, opts...)
	equal(t, "findings without the user's rule", findings(rep), []string{"duplicate-enqueue"})
}

// The unguarded twin is still flagged on the duplicate: its second run adds
// the stamps again, whatever rows are left out.
func TestWorkersUnguardedDuplicateIsFlagged(t *testing.T) {
	t.Parallel()
	job := stampJob(StampWorker{})
	opts := append(followUpOptions[:len(followUpOptions):len(followUpOptions)], twice.Only("duplicate-enqueue"))
	for name, extra := range map[string][]twice.Option{
		"alone": nil, "with the user's rule": {twice.ExcludeRows("river_job", "kind = 'stamp_ping'")},
	} {
		rep := check2(t, job, append(opts, extra...)...)
		equal(t, name+": findings", findings(rep), []string{"duplicate-enqueue"})
	}
}
