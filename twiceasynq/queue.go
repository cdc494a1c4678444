package twiceasynq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/twice"
)

// queue plays asynq for one check: the producer's enqueue (refused as
// asynq's client refuses it), the server handing the task to the handler
// with asynq's context, and the task's state in Redis after the handler
// returned (done, retried, archived).
type queue struct {
	job Job
	set settings

	mu       sync.Mutex
	checks   map[*pgxpool.Pool]*checkState // by the check's own pool
	byWorker map[*pgxpool.Pool]*checkState // by the attempts' pools
	keys     int                           // follow-up tasks enqueued in the check (followups.go)
	onWorker map[string]*attemptRun        // the attempt running on each worker, by its Redis's address (redis.go)
}

// checkState is what Redis would hold for one check's scenario.
type checkState struct {
	tasks map[string]*task // by the check's job ID
	// followUps are the tasks the scenario's handlers enqueued through
	// their Client (followups.go), in the order they were enqueued.
	followUps []*followUpTask
	// locks are the Unique locks refused enqueues took (followups.go).
	locks []lock
	// world is the scenario's database in the attempts' Redis, once an
	// attempt used RedisClientOpt (redis.go, store.go).
	world *world
}

// task is one enqueued task as Redis holds it.
type task struct {
	id      string // asynq's task ID
	state   taskState
	retried int
}

// taskState is where asynq keeps a task.
type taskState int

const (
	stateActive    taskState = iota // handed to a worker, under a lease
	stateRetry                      // failed, waiting for its retry
	stateArchived                   // SkipRetry, or failed MaxRetry times
	stateCompleted                  // succeeded, kept for its Retention
	stateDeleted                    // succeeded (no Retention) or revoked
	statePending                    // enqueued, never handed to a worker yet
)

func (s taskState) String() string {
	return [...]string{"active", "retry", "archived", "completed", "deleted", "pending"}[s]
}

// stored says whether Redis still holds the task: a TaskID enqueued again
// conflicts with it.
func (s taskState) stored() bool { return s != stateDeleted }

// uniqueLocked says whether the task still holds its Unique(ttl) lock:
// asynq releases it when the task succeeds or is revoked.
func (s taskState) uniqueLocked() bool { return s != stateDeleted && s != stateCompleted }

func newQueue(job Job) *queue {
	return &queue{
		job:      job,
		set:      composeOptions(job.Task, job.Options),
		checks:   map[*pgxpool.Pool]*checkState{},
		byWorker: map[*pgxpool.Pool]*checkState{},
		onWorker: map[string]*attemptRun{},
	}
}

// options are asynq's delivery semantics as twice options. There is no
// AckInJobTransaction: asynq acks in Redis, after the handler returned.
func (q *queue) options() []twice.Option {
	return []twice.Option{
		twice.TerminalError(isTerminal),
		twice.QueueBookkeeping(q.fetch, q.settle),
		twice.QueueWords(q.words),
		twice.MaxDeliveries(q.set.maxRetry + 1),
		twice.WithoutOverlappingDeliveries(overlapsOff),
		twice.ServeFake(redisFake, q.serveRedis), // RedisClientOpt (redis.go)
	}
}

// overlapsOff is why asynq never runs a task twice at once.
const overlapsOff = "asynq cancels a handler's context when the task's lease expires, and its recoverer delivers the task again only 30 s after that: the first run can no longer reach its handles when the second starts"

// isTerminal says which errors end the task: SkipRetry archives it,
// RevokeTask deletes it; neither is retried.
func isTerminal(err error) bool {
	return errors.Is(err, asynq.SkipRetry) || isRevoke(err)
}

// fetch is asynq's client and server before a delivery: on a job's first
// delivery the producer enqueues the task (refused as asynq refuses it);
// then the server hands it to a worker.
func (q *queue) fetch(_ context.Context, db *pgxpool.Pool, d twice.Delivery) (string, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.checks[db]
	if st == nil {
		st = &checkState{tasks: map[string]*task{}}
		q.checks[db] = st
	}
	q.byWorker[d.Pool] = st
	if d.FollowUp != "" {
		return q.fetchFollowUp(st, d) // followups.go
	}
	if d.JobID == "job-1" && d.Number == 1 {
		st.followUps, st.locks = nil, nil // a new scenario (its first delivery)
		if st.world != nil {
			if err := st.world.flush(); err != nil {
				return "", err
			}
		}
	}
	t := st.tasks[d.JobID]
	if d.Number == 1 || t == nil {
		if t != nil { // job-1 delivered first again: a new scenario
			clear(st.tasks)
		}
		if why := q.refused(st); why != "" {
			return why, nil
		}
		id := q.set.taskID
		if id == "" {
			id = fmt.Sprintf("00000000-0000-4000-8000-%012d", len(st.tasks)+1)
		}
		t = &task{id: id}
		st.tasks[d.JobID] = t
	}
	if !t.state.stored() || t.state == stateArchived || t.state == stateCompleted {
		return fmt.Sprintf("asynq does not deliver a task that is %s", t.state), nil
	}
	t.state = stateActive
	t.retried = d.Number - 1
	return "", nil
}

// refused says why asynq's client refuses another enqueue of the task
// while the tasks enqueued before are as st holds them, or "". asynq tries
// the Unique lock first, then the task ID.
func (q *queue) refused(st *checkState) string {
	for _, t := range st.tasks {
		if q.set.uniqueTTL > 0 && t.state.uniqueLocked() {
			return fmt.Sprintf("asynq refused the enqueue (ErrDuplicateTask): Unique(%s) holds the lock of the task before (%s)", q.set.uniqueTTL, t.state)
		}
	}
	for _, t := range st.tasks {
		if q.set.taskID != "" && t.id == q.set.taskID && t.state.stored() {
			return fmt.Sprintf("asynq refused the enqueue (ErrTaskIDConflict): the task with ID %q is still stored (%s)", t.id, t.state)
		}
	}
	return ""
}

// settle is asynq's processor after the handler returned and its ack
// reached Redis: done (or completed, with Retention), revoked, archived
// (SkipRetry, or MaxRetry retries used), or scheduled for a retry.
func (q *queue) settle(_ context.Context, db *pgxpool.Pool, d twice.Delivery) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.checks[db]
	if st != nil && d.FollowUp != "" {
		f := st.followUp(d.FollowUp)
		if f == nil {
			return fmt.Errorf("twiceasynq: internal error: the follow-up %s was settled before it was enqueued", d.FollowUp)
		}
		settleFollowUp(f, d.Err) // followups.go
		return nil
	}
	if st == nil || st.tasks[d.JobID] == nil {
		return fmt.Errorf("twiceasynq: internal error: %s was settled before it was enqueued", d.JobID)
	}
	t := st.tasks[d.JobID]
	switch {
	case d.Err == nil && q.set.retention > 0:
		t.state = stateCompleted
	case d.Err == nil, isRevoke(d.Err):
		t.state = stateDeleted
	case errors.Is(d.Err, asynq.SkipRetry), t.retried >= q.set.maxRetry:
		t.state = stateArchived
	default:
		t.state = stateRetry
	}
	return nil
}

// run is one delivery: asynq's processor calling the handler's ProcessTask
// with the task and asynq's context.
func (q *queue) run(ctx context.Context, a *twice.Attempt) error {
	if q.job.Task == nil {
		return errors.New("twiceasynq: the job has no Task: set Job.Task to asynq.NewTask(typename, payload, opts...)")
	}
	if q.job.Handler == nil {
		return errors.New("twiceasynq: the job has no Handler: set Job.Handler to a function returning the handler built on the attempt's handles")
	}
	q.mu.Lock()
	var t task
	if st := q.byWorker[a.Pool]; st != nil && st.tasks[a.JobID] != nil {
		t = *st.tasks[a.JobID]
	}
	q.mu.Unlock()
	if t.id == "" {
		return errors.New("twiceasynq: internal error: the attempt has no enqueued task")
	}
	tctx, cancel, err := taskContext(ctx, taskMetadata{
		ID: t.id, Type: q.job.Task.Type(), Queue: q.set.queue,
		MaxRetry: q.set.maxRetry, RetryCount: t.retried, Deadline: q.set.deadlineFrom(time.Now()),
	})
	if err != nil {
		return fmt.Errorf("twiceasynq: building asynq's handler context: %w", err)
	}
	defer cancel()
	// NewClient(a) and RedisClientOpt(a) find the queue (redis.go).
	return q.running(a, func() error {
		h := q.job.Handler(a)
		if h == nil {
			return errors.New("twiceasynq: Job.Handler returned a nil handler")
		}
		return h.ProcessTask(tctx, newTask(q.job.Task.Type(), q.job.Task.Payload(), taskHeaders(q.job.Task)))
	})
}

// deadlineFrom is the task's deadline as asynq's processor computes it for
// a delivery starting at now.
func (s settings) deadlineFrom(now time.Time) time.Time {
	switch {
	case s.timeout > 0 && !s.deadline.IsZero() && s.deadline.Before(now.Add(s.timeout)):
		return s.deadline
	case s.timeout > 0:
		return now.Add(s.timeout)
	}
	return s.deadline
}
