package twiceriver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"

	"github.com/twicekit/twicekit/twice"
)

// queue plays River for one check: it inserts the job with River's client,
// claims it as River's producer does, runs the worker with a real
// *river.Job and *river.Client, and settles it as River's completer does.
type queue[T river.JobArgs] struct {
	job Job[T]

	mu       sync.Mutex
	checks   map[*pgxpool.Pool]*checkState        // by the check's own pool
	byWorker map[*pgxpool.Pool]*checkState        // by the attempts' pools
	drivers  map[*pgxpool.Pool]*riverpgxv5.Driver // River's driver on each pool
}

// checkState is what the queue knows of one check (checks of the same job
// may run in parallel).
type checkState struct {
	control *pgxpool.Pool                  // the check's own pool
	ids     map[string]int64               // the check's job ID -> river_job.id, this scenario
	rows    map[delivery]*rivertype.JobRow // the row each delivery was given
}

type delivery struct {
	jobID  string
	number int
}

func newQueue[T river.JobArgs](job Job[T]) *queue[T] {
	return &queue[T]{job: job, checks: map[*pgxpool.Pool]*checkState{}, byWorker: map[*pgxpool.Pool]*checkState{}, drivers: map[*pgxpool.Pool]*riverpgxv5.Driver{}}
}

// check is the state of the check whose own pool is db.
func (q *queue[T]) check(db *pgxpool.Pool) *checkState {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.checks[db]
	if st == nil {
		st = &checkState{control: db, ids: map[string]int64{}, rows: map[delivery]*rivertype.JobRow{}}
		q.checks[db] = st
	}
	return st
}

// options are River's delivery semantics as twice options.
func (q *queue[T]) options() []twice.Option {
	return []twice.Option{
		twice.TerminalError(isCancel),
		twice.SnoozeError(isSnooze),
		twice.AckInJobTransaction(q.acked),
		twice.QueueBookkeeping(q.fetch, q.settle),
		twice.QueueWords(riverWords),
		twice.MaxDeliveries(q.maxAttempts()),
		twice.IgnoreColumns(volatileColumns...),
		twice.ExcludeRows("river_job", "metadata ? '"+marker+"'"),
	}
}

// marker is the metadata key of the river_job rows of the job under check:
// they are River's bookkeeping (settled as River would), left out of the
// comparison; the jobs the worker enqueues are compared.
const marker = "twicekit_job_under_check"

// insertOpts are the job's insert options with the marker in its metadata.
func (q *queue[T]) insertOpts() (*river.InsertOpts, error) {
	var o river.InsertOpts
	if q.job.InsertOpts != nil {
		o = *q.job.InsertOpts
	}
	meta := o.Metadata
	if a, ok := any(q.job.Args).(river.JobArgsWithInsertOpts); ok && len(meta) == 0 {
		meta = a.InsertOpts().Metadata
	}
	m := map[string]any{}
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &m); err != nil {
			return nil, fmt.Errorf("the job's InsertOpts.Metadata is not a JSON object: %w", err)
		}
	}
	m[marker] = true
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	o.Metadata = b
	return &o, nil
}

// volatileColumns are River's bookkeeping columns of river_job, which differ
// between two clean runs; kind, args, queue, state, priority, max_attempts,
// tags and the unique key are compared.
var volatileColumns = []string{
	"river_job.id", "river_job.created_at", "river_job.scheduled_at", "river_job.attempted_at",
	"river_job.finalized_at", "river_job.attempt", "river_job.attempted_by", "river_job.errors",
	"river_job.metadata",
}

func isCancel(err error) bool {
	var c *rivertype.JobCancelError
	return errors.As(err, &c)
}

func isSnooze(err error) bool {
	var s *rivertype.JobSnoozeError
	return errors.As(err, &s)
}

// maxAttempts is how often River runs the job before it discards it.
func (q *queue[T]) maxAttempts() int {
	if o := q.job.InsertOpts; o != nil && o.MaxAttempts > 0 {
		return o.MaxAttempts
	}
	if a, ok := any(q.job.Args).(river.JobArgsWithInsertOpts); ok && a.InsertOpts().MaxAttempts > 0 {
		return a.InsertOpts().MaxAttempts
	}
	return river.MaxAttemptsDefault
}

// client is River's client on pool, never started: it starts no goroutines
// and works no jobs; it inserts and completes them. Each attempt gets a new
// one (fresh, as after a worker's restart), so that whether River sends its
// insert notification (at most once per queue per FetchCooldown and client)
// does not depend on the attempts before; the driver, which asks the
// server's version once, is kept per pool.
func (q *queue[T]) client(ctx context.Context, st *checkState, pool *pgxpool.Pool) (*river.Client[pgx.Tx], error) {
	drv, err := q.driver(ctx, st, pool)
	if err != nil {
		return nil, err
	}
	c, err := river.NewClient(drv, &river.Config{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		// The worker may insert follow-up jobs whose workers this check
		// does not know.
		SkipUnknownJobCheck: true,
		JobTimeout:          q.job.JobTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("twiceriver: River's client: %w", err)
	}
	return c, nil
}

// driver is River's pgx driver on pool, made once per pool. River asks the
// server's version once per driver, on its first query: it asks here, on
// the check's own connection, so that no attempt's points depend on
// whether it is the first on its pool.
func (q *queue[T]) driver(ctx context.Context, st *checkState, pool *pgxpool.Pool) (*riverpgxv5.Driver, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if d := q.drivers[pool]; d != nil {
		return d, nil
	}
	drv := riverpgxv5.New(pool)
	if pool != st.control {
		if err := pgx.BeginFunc(ctx, st.control, func(tx pgx.Tx) error {
			return drv.UnwrapExecutor(tx).InitDriver(ctx)
		}); err != nil {
			return nil, fmt.Errorf("twiceriver: River's driver: %w", err)
		}
	}
	q.drivers[pool] = drv
	return drv, nil
}

// fetch is River's producer: on a job's first delivery in a scenario it
// inserts the job with River's client (InsertTx, as the application's
// producer would); then it claims it: state running, attempt counted. A job
// whose row is finalized (completed in its own transaction, cancelled,
// discarded) is not delivered again, and neither is an insert River
// skipped as a duplicate of a unique job.
func (q *queue[T]) fetch(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (string, error) {
	st := q.check(db)
	q.mu.Lock()
	q.byWorker[d.Pool] = st
	id, known := st.ids[d.JobID]
	q.mu.Unlock()
	c, err := q.client(ctx, st, db)
	if err != nil {
		return "", err
	}
	if d.Number == 1 || !known {
		tx, err := db.Begin(ctx)
		if err != nil {
			return "", err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		opts, err := q.insertOpts()
		if err != nil {
			return "", err
		}
		res, err := c.InsertTx(ctx, tx, q.job.Args, opts)
		if err != nil {
			return "", fmt.Errorf("inserting the job with River's client: %w", err)
		}
		if err := tx.Commit(ctx); err != nil {
			return "", err
		}
		id = res.Job.ID
		q.mu.Lock()
		st.ids[d.JobID] = id
		q.mu.Unlock()
		if res.UniqueSkippedAsDuplicate {
			return "River skipped the insert as a duplicate of a unique job (its UniqueOpts)", nil
		}
	}
	// Claim it as River's producer does, unless its first run holds it
	// locked (a rescued job running twice at once): then it stays running.
	if _, err := db.Exec(ctx, `
UPDATE river_job SET state = 'running', attempt = attempt + 1, attempted_at = now(),
  attempted_by = array_append(coalesce(attempted_by, '{}'), 'twicekit')
WHERE id = (SELECT id FROM river_job WHERE id = $1 AND state NOT IN ('completed', 'cancelled', 'discarded')
            FOR UPDATE SKIP LOCKED)`, id); err != nil {
		return "", fmt.Errorf("claiming the job: %w", err)
	}
	row, err := c.Driver().GetExecutor().JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: id})
	if err != nil {
		return "", fmt.Errorf("reading the job's row: %w", err)
	}
	switch row.State {
	case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
		return fmt.Sprintf("River does not run a job that is %s", row.State), nil
	}
	row.State = rivertype.JobStateRunning
	q.mu.Lock()
	st.rows[delivery{d.JobID, d.Number}] = row
	q.mu.Unlock()
	return "", nil
}

// run is one delivery: River's executor calling the worker's Work.
func (q *queue[T]) run(ctx context.Context, a *twice.Attempt) error {
	q.mu.Lock()
	st := q.byWorker[a.Pool]
	var row *rivertype.JobRow
	if st != nil {
		row = st.rows[delivery{a.JobID, a.Number}]
	}
	q.mu.Unlock()
	if row == nil {
		return errors.New("twiceriver: internal error: the attempt has no river_job row")
	}
	if q.job.Worker == nil {
		return errors.New("twiceriver: the job has no Worker: set Job.Worker to a function returning the worker built on the attempt's handles")
	}
	c, err := q.client(context.WithoutCancel(ctx), st, a.Pool)
	if err != nil {
		return err
	}
	job := &river.Job[T]{JobRow: row}
	if err := json.Unmarshal(row.EncodedArgs, &job.Args); err != nil {
		return fmt.Errorf("twiceriver: decoding the job's args: %w", err)
	}
	w := q.job.Worker(a)
	wctx := rivertest.WorkContext(ctx, c)
	if d := cmp.Or(w.Timeout(job), q.job.JobTimeout, river.JobTimeoutDefault); d > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(wctx, d)
		defer cancel()
	}
	return w.Work(wctx, job)
}

// acked tells whether the job's completion committed in the worker's own
// transaction (river.JobCompleteTx): River then never runs it again.
func (q *queue[T]) acked(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (bool, error) {
	st := q.check(db)
	q.mu.Lock()
	id, ok := st.ids[d.JobID]
	q.mu.Unlock()
	if !ok {
		return false, nil
	}
	var state string
	if err := db.QueryRow(ctx, `SELECT state FROM river_job WHERE id = $1`, id).Scan(&state); err != nil {
		return false, err
	}
	return state == string(rivertype.JobStateCompleted), nil
}

// settle is River's completer after Work returned: completed, cancelled
// (JobCancel), snoozed (JobSnooze), retryable, or discarded after the last
// attempt — only if the job is still running, as River's own
// JobSetStateIfRunning does.
func (q *queue[T]) settle(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) error {
	st := q.check(db)
	c, err := q.client(ctx, st, db)
	if err != nil {
		return err
	}
	q.mu.Lock()
	row := st.rows[delivery{d.JobID, d.Number}]
	q.mu.Unlock()
	if row == nil {
		return nil
	}
	now := time.Now().UTC()
	var params *riverdriver.JobSetStateIfRunningParams
	var cancel *rivertype.JobCancelError
	var snooze *rivertype.JobSnoozeError
	switch {
	case d.Err == nil:
		params = riverdriver.JobSetStateCompleted(row.ID, now, nil)
	case errors.As(d.Err, &snooze):
		params = riverdriver.JobSetStateSnoozed(row.ID, now.Add(snooze.Duration), row.Attempt-1, nil)
	default:
		errData, err := json.Marshal(rivertype.AttemptError{At: now, Attempt: row.Attempt, Error: d.Err.Error()})
		if err != nil {
			return err
		}
		switch {
		case errors.As(d.Err, &cancel):
			params = riverdriver.JobSetStateCancelled(row.ID, now, errData, nil)
		case row.Attempt >= row.MaxAttempts:
			params = riverdriver.JobSetStateDiscarded(row.ID, now, errData, nil)
		default:
			params = riverdriver.JobSetStateErrorRetryable(row.ID, now, errData, nil)
		}
	}
	_, err = c.Driver().GetExecutor().JobSetStateIfRunningMany(ctx, &riverdriver.JobSetStateIfRunningManyParams{
		ID:              []int64{params.ID},
		Attempt:         []*int{params.Attempt},
		ErrData:         [][]byte{params.ErrData},
		FinalizedAt:     []*time.Time{params.FinalizedAt},
		MetadataDoMerge: []bool{false},
		MetadataUpdates: [][]byte{nil},
		ScheduledAt:     []*time.Time{params.ScheduledAt},
		State:           []rivertype.JobState{params.State},
	})
	return err
}
