package twicegue

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"
	"github.com/vgarvardt/gue/v5"
	"github.com/vgarvardt/gue/v5/adapter"
	"github.com/vgarvardt/gue/v5/adapter/pgxv5"

	"github.com/twicekit/twicekit/twice"
)

// queue plays gue for one check: the producer enqueues the job with gue's
// client; each delivery is gue's worker on the attempt's pool: it locks the
// job's row in a transaction (LockJobByID, FOR UPDATE SKIP LOCKED), runs
// the work function with it, then deletes the job and commits (or records
// the error with j.Error, which commits too).
type queue struct {
	job Job

	mu       sync.Mutex
	checks   map[*pgxpool.Pool]*checkState // by the check's own pool
	byWorker map[*pgxpool.Pool]*checkState // by the attempts' pools
}

// checkState is what the queue knows of one check's scenario.
type checkState struct {
	ids     map[string]ulid.ULID // the check's job ID -> gue's job_id
	running map[string]int       // the check's job ID -> its attempts running now
}

func newQueue(job Job) *queue {
	return &queue{job: job, checks: map[*pgxpool.Pool]*checkState{}, byWorker: map[*pgxpool.Pool]*checkState{}}
}

// options are gue's delivery semantics as twice options.
func (q *queue) options() []twice.Option {
	opts := []twice.Option{
		twice.AckInJobTransaction(q.acked),
		twice.QueueBookkeeping(q.fetch, nil),
		twice.TerminalError(isDiscarded),
		twice.SnoozeError(isReschedule),
		twice.QueueWords(gueWords),
		twice.IgnoreColumns("gue_jobs.job_id", "gue_jobs.run_at", "gue_jobs.created_at", "gue_jobs.updated_at"),
		twice.QueueTables("gue_jobs"),
		twice.Normalize("gue_jobs.args", argsAsJSON),
	}
	if q.job.Job != nil {
		// The job under check's row is gue's bookkeeping; the jobs the work
		// enqueues are compared.
		opts = append(opts, twice.ExcludeRows("gue_jobs", fmt.Sprintf("job_type = %s AND args = decode('%s', 'hex') AND queue = %s",
			literal(q.job.Job.Type), hex.EncodeToString(q.job.Job.Args), literal(q.job.Job.Queue))))
		if q.job.WorkFollowUps && q.job.WorkMap != nil {
			opts = append(opts, twice.WorkFollowUps(q.pending)) // followups.go
		}
	}
	return opts
}

func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// isReschedule says which errors ask gue to run the job again at a set
// time (gue.ErrRescheduleJobIn, ErrRescheduleJobAt), unwrapped as gue
// checks them. (A discard is one too in gue's types; run returns it as a
// DiscardedError, which ends the job.)
func isReschedule(err error) bool {
	_, ok := err.(gue.ErrJobReschedule)
	return ok && reflect.TypeOf(err) != discardType
}

// DiscardedError is what an attempt returns when gue discarded the job
// (deleted it without working it again): the work function returned
// gue.ErrDiscardJob, or an error for which the client's Backoff returned a
// negative duration. It ends the job.
type DiscardedError struct{ Err error }

func (e *DiscardedError) Error() string { return "gue discarded the job: " + e.Err.Error() }
func (e *DiscardedError) Unwrap() error { return e.Err }

func isDiscarded(err error) bool {
	var d *DiscardedError
	return errors.As(err, &d)
}

// discardType is the type of gue.ErrDiscardJob's errors (unexported in gue).
var discardType = reflect.TypeOf(gue.ErrDiscardJob(""))

// discards says whether gue's j.Error deletes the job for err, as gue
// decides (Job.calculateErrorRunAt): ErrDiscardJob, unwrapped; any other
// error that is not a reschedule when the backoff for its error count is
// negative.
func (q *queue) discards(err error, errorCount int32) bool {
	if reflect.TypeOf(err) == discardType {
		return true
	}
	if isReschedule(err) {
		return false
	}
	backoff := q.job.Backoff
	if backoff == nil {
		backoff = gue.DefaultExponentialBackoff
	}
	return backoff(int(errorCount)) < 0
}

// client is gue's client on pool.
func (q *queue) client(pool *pgxpool.Pool) (*gue.Client, error) {
	opts := []gue.ClientOption{gue.WithClientLogger(adapter.NoOpLogger{})}
	if q.job.Backoff != nil {
		opts = append(opts, gue.WithClientBackoff(q.job.Backoff))
	}
	return gue.NewClient(pgxv5.NewConnPool(pool), opts...)
}

// fetch is the producer: on a job's first delivery in a scenario it
// enqueues the job with gue's client, under a job ID numbered in the
// scenario (gue makes a random ULID; a numbered one keeps reports the
// same from run to run).
func (q *queue) fetch(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (string, error) {
	if q.job.Job == nil {
		return "", nil // run says what to set
	}
	q.mu.Lock()
	st := q.checks[db]
	if st == nil {
		st = &checkState{ids: map[string]ulid.ULID{}, running: map[string]int{}}
		q.checks[db] = st
	}
	q.byWorker[d.Pool] = st
	if d.FollowUp != "" {
		q.mu.Unlock()
		return q.fetchFollowUp(ctx, db, st, d) // followups.go
	}
	id, known := st.ids[d.JobID]
	if d.Number > 1 && known {
		alone := st.running[d.JobID] == 0
		q.mu.Unlock()
		if alone {
			return "", waitUnlocked(ctx, db, id)
		}
		return "", nil
	}
	if known { // job-1 delivered first again: a new scenario
		clear(st.ids)
	}
	id = ulid.ULID{}
	id[15] = byte(len(st.ids) + 1)
	st.ids[d.JobID] = id
	q.mu.Unlock()
	c, err := q.client(db)
	if err != nil {
		return "", err
	}
	j := &gue.Job{Type: q.job.Job.Type, Args: q.job.Job.Args, Queue: q.job.Job.Queue, Priority: q.job.Job.Priority, RunAt: q.job.Job.RunAt}
	if err := c.EnqueueWithID(ctx, j, id); err != nil {
		return "", fmt.Errorf("enqueueing the job with gue's client: %w", err)
	}
	return "", nil
}

// waitUnlocked waits until no session holds the job's row locked. It is
// called before a redelivery while no attempt of the job runs: a lock then
// belongs to the session of an attempt that crashed, which PostgreSQL ends
// (rolling its transaction back) a moment after its connection was cut.
// gue's next worker would lock the row once it is free; waiting here keeps
// the redelivery from finding it still held.
func waitUnlocked(ctx context.Context, db *pgxpool.Pool, id ulid.ULID) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		free := false
		err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
			var exists, lockable bool
			err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM gue_jobs WHERE job_id = $1),
  EXISTS (SELECT 1 FROM (SELECT job_id FROM gue_jobs WHERE job_id = $1 FOR UPDATE SKIP LOCKED) l)`, id.String()).Scan(&exists, &lockable)
			free = !exists || lockable
			return err
		})
		if err != nil || free {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the job's row (gue_jobs.job_id %s) stayed locked for 10s after its last attempt ended", id)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// id is gue's job ID of the check's job ID, in the check whose pool (own
// or attempt's) is pool.
func (q *queue) id(pool *pgxpool.Pool, jobID string, own bool) (ulid.ULID, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.byWorker[pool]
	if own {
		st = q.checks[pool]
	}
	if st == nil {
		return ulid.ULID{}, false
	}
	id, ok := st.ids[jobID]
	return id, ok
}

// acked says whether the job's row is gone: gue deleted it in the job's
// transaction (done, or discarded), so it is never delivered again.
func (q *queue) acked(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (bool, error) {
	id, ok := q.id(db, d.JobID, true)
	if !ok {
		return false, nil
	}
	var gone bool
	err := db.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM gue_jobs WHERE job_id = $1)`, id.String()).Scan(&gone)
	return gone, err
}

// run is one delivery: gue's worker (Worker.WorkOne) locking the job by its
// ID on the attempt's pool and working it.
func (q *queue) run(ctx context.Context, a *twice.Attempt) error {
	if q.job.Job == nil {
		return errors.New("twicegue: the job has no Job: set Job.Job to the *gue.Job the producer enqueues (Type and Args)")
	}
	if q.job.WorkMap == nil {
		return errors.New("twicegue: the job has no WorkMap: set Job.WorkMap to a function returning gue's work functions built on the attempt's handles")
	}
	wf := q.job.WorkMap(a)[q.job.Job.Type]
	if wf == nil {
		return fmt.Errorf("twicegue: the WorkMap has no work function for the job's type %q", q.job.Job.Type)
	}
	id, ok := q.id(a.Pool, a.JobID, false)
	if !ok {
		return errors.New("twicegue: internal error: the attempt has no enqueued job")
	}
	return q.workByID(ctx, a, wf, id)
}

// workByID is gue's worker on the job whose ID is id: locked by its ID
// on the attempt's pool, worked, deleted (or its error recorded).
func (q *queue) workByID(ctx context.Context, a *twice.Attempt, wf gue.WorkFunc, id ulid.ULID) error {
	defer q.attemptRunning(a, +1)()
	c, err := q.client(a.Pool)
	if err != nil {
		return err
	}
	j, err := c.LockJobByID(ctx, id)
	if errors.Is(err, adapter.ErrNoRows) {
		return nil // another worker holds its lock, or it is gone: nothing to work
	}
	if err != nil {
		return err
	}
	if werr := work(ctx, wf, j); werr != nil {
		discard := q.discards(werr, j.ErrorCount+1)
		if err := j.Error(ctx, werr); err != nil {
			return errors.Join(werr, err)
		}
		if discard {
			return &DiscardedError{Err: werr}
		}
		return werr
	}
	if err := j.Delete(ctx); err != nil {
		return errors.Join(err, j.Done(ctx))
	}
	return j.Done(ctx)
}

// attemptRunning counts an attempt of a's job as running (delta +1) and
// returns the function that counts it out.
func (q *queue) attemptRunning(a *twice.Attempt, delta int) func() {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.byWorker[a.Pool]
	st.running[a.JobID] += delta
	return func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		st.running[a.JobID] -= delta
	}
}

// work runs the work function. A panic is recorded on the job as gue's
// worker records it (j.Error, committed), then raised again for the check
// to report, with the work function's stack.
func work(ctx context.Context, wf gue.WorkFunc, j *gue.Job) error {
	defer func() {
		if r := recover(); r != nil {
			stack := debug.Stack()
			_ = j.Error(ctx, fmt.Errorf("%w: %v", gue.ErrJobPanicked, r))
			panic(fmt.Sprintf("%v\n\nthe work function's stack:\n%s", r, stack))
		}
	}()
	return wf(ctx, j)
}
