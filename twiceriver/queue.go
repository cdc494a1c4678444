package twiceriver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	cfg *river.Config // the client's config, River's defaults filled in
	// snoozed, when set, is called after each snooze River's executor
	// settled inside a delivery (the differential suite reads the row).
	onSnooze func(ctx context.Context, row *rivertype.JobRow)

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
	return &queue[T]{job: job, cfg: job.config(), checks: map[*pgxpool.Pool]*checkState{}, byWorker: map[*pgxpool.Pool]*checkState{}, drivers: map[*pgxpool.Pool]*riverpgxv5.Driver{}}
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

// options are River's delivery semantics as twice options. Snoozes never
// reach twice: River's executor plays them inside a delivery (run).
func (q *queue[T]) options() []twice.Option {
	opts := []twice.Option{
		twice.TerminalError(isCancel),
		twice.AckInJobTransaction(q.acked),
		twice.QueueBookkeeping(q.fetch, q.settle),
		twice.QueueWordsOf(riverWords),
		twice.QueueLabels(riverLabel),
		twice.MaxDeliveries(q.maxAttempts()),
		twice.IgnoreColumns(bookkeepingColumns...),
		twice.QueueTables("river_job"),
		twice.ExcludeRows("river_job", "metadata ? '"+marker+"'"),
	}
	if q.job.Workers != nil { // followups.go
		opts = append(opts, twice.WorkFollowUps(q.pending), twice.ExcludeRows("river_job", "metadata ? '"+workedMarker+"'"),
			// The follow-ups' River clients run River's leader election:
			// whether one lives long enough to write its river_leader row
			// is the machine's timing, not the job's work (a loaded machine
			// wrote it in one clean run and not in a scenario).
			twice.ExcludeRows("river_leader", "true"))
	}
	return opts
}

// marker is the metadata key of the river_job rows of the job under check:
// they are River's bookkeeping (settled as River would), left out of the
// comparison; the jobs the worker enqueues are compared. The worker never
// sees it: its job's Metadata is what River and the producer wrote.
const marker = "twicekit_job_under_check"

// insertOpts are the insert options base of args with the marker in their
// metadata.
func insertOpts(args river.JobArgs, base *river.InsertOpts) (*river.InsertOpts, error) {
	var o river.InsertOpts
	if base != nil {
		o = *base
	}
	meta := o.Metadata
	if a, ok := args.(river.JobArgsWithInsertOpts); ok && len(meta) == 0 {
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

// unmarked is the row as the worker sees it: its metadata without the
// marker.
func unmarked(row *rivertype.JobRow) *rivertype.JobRow {
	r := *row
	m := map[string]json.RawMessage{}
	if json.Unmarshal(row.Metadata, &m) == nil {
		delete(m, marker)
		if b, err := json.Marshal(m); err == nil {
			r.Metadata = b
		}
	}
	return &r
}

// bookkeepingColumns are River's bookkeeping columns of river_job, which differ
// between two clean runs; kind, args, queue, state, priority, max_attempts,
// tags and the unique key are compared.
var bookkeepingColumns = []string{
	"river_job.id", "river_job.created_at", "river_job.scheduled_at", "river_job.attempted_at",
	"river_job.finalized_at", "river_job.attempt", "river_job.attempted_by", "river_job.errors",
	"river_job.metadata",
}

func isCancel(err error) bool {
	var c *rivertype.JobCancelError
	return errors.As(err, &c)
}

// maxAttempts is how often River runs the job before it discards it: the
// insert options', the args', the config's, River's default.
func (q *queue[T]) maxAttempts() int {
	args, opts := q.argsOf(twice.Delivery{})
	if opts != nil && opts.MaxAttempts > 0 {
		return opts.MaxAttempts
	}
	if a, ok := args.(river.JobArgsWithInsertOpts); ok && a.InsertOpts().MaxAttempts > 0 {
		return a.InsertOpts().MaxAttempts
	}
	return q.cfg.MaxAttempts
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
	c, err := river.NewClient(drv, withInsertNote(q.cfg))
	if err != nil {
		return nil, fmt.Errorf("twiceriver: River's client on the job's Config: %w", err)
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
// skipped as a duplicate of a unique job. A job still running (its run
// crashed, or is still going) is rescued first, as River's rescuer does
// after RescueStuckJobsAfter.
func (q *queue[T]) fetch(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (string, error) {
	st := q.check(db)
	q.mu.Lock()
	q.byWorker[d.Pool] = st
	id, known := st.ids[d.JobID]
	q.mu.Unlock()
	if d.FollowUp != "" {
		return q.fetchFollowUp(ctx, db, st, d) // followups.go
	}
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
		args, base := q.argsOf(d)
		if args == nil {
			return "the periodic job's constructor returned no args: River inserts no job for this run", nil
		}
		opts, err := insertOpts(args, base)
		if err != nil {
			return "", err
		}
		res, err := c.InsertTx(ctx, tx, args, opts)
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
	skip, err := q.rescue(ctx, db, id)
	if skip != "" || err != nil {
		return skip, err
	}
	row, skip, err := claim(ctx, c, db, id)
	if skip != "" || err != nil {
		return skip, err
	}
	q.mu.Lock()
	st.rows[delivery{d.JobID, d.Number}] = row
	q.mu.Unlock()
	return "", nil
}

// argsOf are the args and insert options River inserts for d's job: the
// job's Args and InsertOpts, or a PeriodicJob's constructor's at d.Now, the
// delivery's time on the check's clock (the next run's time for the next
// run). The constructor's nil insert options are the job's InsertOpts.
// Nil args: the constructor inserts no job.
func (q *queue[T]) argsOf(d twice.Delivery) (river.JobArgs, *river.InsertOpts) {
	p := q.job.PeriodicJob
	if p == nil {
		return q.job.Args, q.job.InsertOpts
	}
	args, opts := p.build(d.Now)
	if opts == nil {
		opts = q.job.InsertOpts
	}
	return args, opts
}

// rescue is River's rescuer on a job left running: one more error
// ("Stuck job rescued by JobRescuer"), then retryable, or discarded when
// its attempts are used up. A job whose worker has no timeout River's
// rescuer never rescues: it stays running, and is never run again.
func (q *queue[T]) rescue(ctx context.Context, db *pgxpool.Pool, id int64) (string, error) {
	if timeout, _ := q.job.timeouts(); timeout < 0 {
		var state string
		if err := db.QueryRow(ctx, `SELECT state FROM river_job WHERE id = $1`, id).Scan(&state); err != nil {
			return "", err
		}
		if state == string(rivertype.JobStateRunning) {
			return "River's rescuer never runs again a job whose worker has no timeout (Timeout -1)", nil
		}
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var attempt, maxAttempts int
	// A job whose first run holds its row locked is left as it is.
	err = tx.QueryRow(ctx, `SELECT attempt, max_attempts FROM river_job WHERE id = $1 AND state = 'running' FOR UPDATE SKIP LOCKED`, id).Scan(&attempt, &maxAttempts)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("rescuing the job as River's rescuer does: %w", err)
	}
	exec := riverpgxv5.New(nil).UnwrapExecutor(tx)
	row, err := exec.JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: id})
	if err != nil {
		return "", err
	}
	now := time.Now().UTC()
	errData, err := json.Marshal(rivertype.AttemptError{At: now, Attempt: max(attempt, 0), Error: "Stuck job rescued by JobRescuer"})
	if err != nil {
		return "", err
	}
	state, finalized, at := rivertype.JobStateRetryable, (*time.Time)(nil), q.cfg.RetryPolicy.NextRetry(row)
	if attempt >= maxAttempts {
		state, finalized, at = rivertype.JobStateDiscarded, &now, row.ScheduledAt
	}
	if _, err := exec.JobRescueMany(ctx, &riverdriver.JobRescueManyParams{
		ID: []int64{id}, Error: [][]byte{errData}, FinalizedAt: []*time.Time{finalized},
		ScheduledAt: []time.Time{at}, State: []string{string(state)}, StuckHorizon: now.Add(24 * time.Hour),
	}); err != nil {
		return "", fmt.Errorf("rescuing the job as River's rescuer does: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return "", err
	}
	if state == rivertype.JobStateDiscarded {
		return "River's rescuer discarded the job: it was stuck running on its last attempt", nil
	}
	return "", nil
}

// claim is River's producer locking the job for work: running, its
// attempt counted. It returns why River would not run it now, if so.
func claim(ctx context.Context, c *river.Client[pgx.Tx], db *pgxpool.Pool, id int64) (*rivertype.JobRow, string, error) {
	// Unless its first run holds it locked (a rescued job running twice at
	// once): then it stays running.
	if _, err := db.Exec(ctx, `
UPDATE river_job SET state = 'running', attempt = attempt + 1, attempted_at = now(),
  attempted_by = array_append(coalesce(attempted_by, '{}'), 'twicekit')
WHERE id = (SELECT id FROM river_job WHERE id = $1 AND state NOT IN ('completed', 'cancelled', 'discarded')
            FOR UPDATE SKIP LOCKED)`, id); err != nil {
		return nil, "", fmt.Errorf("claiming the job: %w", err)
	}
	row, err := c.Driver().GetExecutor().JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: id})
	if err != nil {
		return nil, "", fmt.Errorf("reading the job's row: %w", err)
	}
	switch row.State {
	case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
		return nil, fmt.Sprintf("River does not run a job that is %s", row.State), nil
	}
	row.State = rivertype.JobStateRunning
	return row, "", nil
}

// maxSnoozes bounds the snoozes of one delivery: a worker that snoozes
// this often in a row never runs its work.
const maxSnoozes = 10

// SnoozedForeverError is the error of a delivery that snoozed maxSnoozes
// times in a row: River would deliver it again and again, and its work
// never runs.
type SnoozedForeverError struct {
	// Snoozes is how often it snoozed; Last is its last snooze's duration.
	Snoozes int
	Last    time.Duration
}

func (e *SnoozedForeverError) Error() string {
	return fmt.Sprintf("snoozed %d times and never ran its work (river.JobSnooze(%s) each time): River gives job.Attempt back on every snooze, so a worker that snoozes on its first delivery must tell it from the next by the \"snoozes\" count River keeps in job.Metadata", e.Snoozes, e.Last)
}

// run is one delivery: River's executor calling the worker's Work. A
// snooze (river.JobSnooze) is settled as River's executor settles it (the
// attempt given back, "snoozes" counted in the metadata) and the job is
// claimed and run again, up to maxSnoozes times.
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
	wctx := rivertest.WorkContext(ctx, c)
	for snoozes := 0; ; snoozes++ {
		err := q.execute(wctx, q.job.Worker(a), unmarked(row))
		var snooze *rivertype.JobSnoozeError
		if !errors.As(err, &snooze) || ctx.Err() != nil {
			return err
		}
		if snoozes+1 >= maxSnoozes {
			return &SnoozedForeverError{Snoozes: maxSnoozes, Last: snooze.Duration}
		}
		ctl := context.WithoutCancel(ctx)
		if err := q.setState(ctl, st, q.snoozed(row, snooze)); err != nil {
			return fmt.Errorf("twiceriver: snoozing the job as River does: %w", err)
		}
		if q.onSnooze != nil {
			q.onSnooze(ctl, row)
		}
		cc, err := q.client(ctl, st, st.control) // River's own statements: on the check's pool, never points
		if err != nil {
			return err
		}
		next, skip, err := claim(ctl, cc, st.control, row.ID)
		if err != nil || skip != "" {
			return cmp.Or(err, errors.New("twiceriver: internal error: "+skip))
		}
		row = next
		q.mu.Lock()
		st.rows[delivery{a.JobID, a.Number}] = row
		q.mu.Unlock()
	}
}

// schedulerInterval is River's JobSchedulerIntervalDefault: a retry or a
// snooze due sooner than that makes the job available at once, a later one
// scheduled (retryable).
const schedulerInterval = 5 * time.Second

// snoozed is River's executor settling a snooze: the attempt given back,
// "snoozes" one more in the metadata.
func (q *queue[T]) snoozed(row *rivertype.JobRow, snooze *rivertype.JobSnoozeError) *riverdriver.JobSetStateIfRunningParams {
	now := time.Now().UTC()
	at := now.Add(snooze.Duration)
	meta, _ := json.Marshal(map[string]any{"snoozes": snoozesOf(row.Metadata) + 1})
	if snooze.Duration <= schedulerInterval {
		return riverdriver.JobSetStateSnoozedAvailable(row.ID, at, row.Attempt-1, meta)
	}
	return riverdriver.JobSetStateSnoozed(row.ID, at, row.Attempt-1, meta)
}

// snoozesOf is the "snoozes" count River keeps in a job's metadata.
func snoozesOf(metadata []byte) int64 {
	var m struct {
		Snoozes int64 `json:"snoozes"`
	}
	_ = json.Unmarshal(metadata, &m)
	return m.Snoozes
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

// settle is River's executor and completer after Work returned: completed,
// cancelled (JobCancel), retryable (available when the retry policy's next
// retry is within the scheduler's interval), or discarded after the last
// attempt — only if the job is still running, as River's own
// JobSetStateIfRunning does. A panic is an error whose trace River keeps.
func (q *queue[T]) settle(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) error {
	st := q.check(db)
	if d.FollowUp != "" {
		return q.settleFollowUp(ctx, db, st, d) // followups.go
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
	var panicked *PanicError
	switch {
	case d.Err == nil:
		params = riverdriver.JobSetStateCompleted(row.ID, now, nil)
	case errors.As(d.Err, &snooze):
		params = q.snoozed(row, snooze)
	default:
		ae := rivertype.AttemptError{At: now, Attempt: row.Attempt, Error: d.Err.Error()}
		if errors.As(d.Err, &panicked) {
			ae.Error, ae.Trace = fmt.Sprint(panicked.Value), panicked.Trace
		}
		errData, err := json.Marshal(ae)
		if err != nil {
			return err
		}
		switch {
		case errors.As(d.Err, &cancel):
			params = riverdriver.JobSetStateCancelled(row.ID, now, errData, nil)
		case row.Attempt >= row.MaxAttempts:
			params = riverdriver.JobSetStateDiscarded(row.ID, now, errData, nil)
		default:
			next := q.cfg.RetryPolicy.NextRetry(row)
			if next.Before(now) {
				next = (&river.DefaultClientRetryPolicy{}).NextRetry(row)
			}
			if next.Sub(time.Now()) <= schedulerInterval {
				params = riverdriver.JobSetStateErrorAvailable(row.ID, next, errData, nil)
			} else {
				params = riverdriver.JobSetStateErrorRetryable(row.ID, next, errData, nil)
			}
		}
	}
	return q.setState(ctx, st, params)
}

// setState is River's completer: JobSetStateIfRunningMany for one job.
func (q *queue[T]) setState(ctx context.Context, st *checkState, p *riverdriver.JobSetStateIfRunningParams) error {
	c, err := q.client(ctx, st, st.control)
	if err != nil {
		return err
	}
	_, err = c.Driver().GetExecutor().JobSetStateIfRunningMany(ctx, &riverdriver.JobSetStateIfRunningManyParams{
		ID:              []int64{p.ID},
		Attempt:         []*int{p.Attempt},
		ErrData:         [][]byte{p.ErrData},
		FinalizedAt:     []*time.Time{p.FinalizedAt},
		MetadataDoMerge: []bool{p.MetadataDoMerge},
		MetadataUpdates: [][]byte{p.MetadataUpdates},
		ScheduledAt:     []*time.Time{p.ScheduledAt},
		State:           []rivertype.JobState{p.State},
	})
	return err
}
