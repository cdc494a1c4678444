package twiceasynq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/twice"
)

// Follow-ups: a handler enqueues more tasks through asynq's client. Under
// a check it enqueues them through NewClient(a), whose enqueue is a point
// of the attempt (an effect, compared as EffectKind) into the model's
// Redis, refused as asynq's client refuses it. With Job.Mux, the check
// then works them as asynq's server does: each with the mux's handler for
// its type, its own options (MaxRetry, Queue, Timeout), on the check's
// clock after its ProcessIn or ProcessAt.

// EffectKind is the kind of the effect an enqueue through NewClient makes:
// twice.EffectPolicy(twiceasynq.EffectKind, …) declares its policy
// (exactly-once unless declared).
const EffectKind = "asynq task"

// attemptQueues is the queue of each attempt a check of twiceasynq runs,
// while its handler is built and runs: NewClient finds it there.
var attemptQueues sync.Map // *twice.Attempt -> *attemptRun (redis.go)

// Client is asynq's client as a check plays it, for one attempt. Its
// Enqueue and EnqueueContext have asynq.Client's signatures, so an
// application that takes an interface of them takes a Client. An enqueue
// is a point of the attempt: a crash can strike before it or after it
// reached Redis. It is refused as asynq's client refuses it
// (asynq.ErrTaskIDConflict while a task with the same TaskID is stored,
// asynq.ErrDuplicateTask while a Unique task's lock is held). The tasks it
// enqueues are compared as effects of kind EffectKind, and worked as
// follow-ups when Job.Mux is set.
type Client struct {
	q   *queue
	a   *twice.Attempt
	err error
}

// NewClient returns the asynq client of the attempt a: call it in
// Job.Handler or Job.Mux, where the application builds its handler with
// its *asynq.Client.
func NewClient(a *twice.Attempt) *Client {
	r, ok := attemptQueues.Load(a)
	if !ok {
		return &Client{err: errors.New("twiceasynq.NewClient: the attempt is not one twiceasynq is running: call NewClient(a) in Job.Handler or Job.Mux with the attempt they get")}
	}
	return &Client{q: r.(*attemptRun).q, a: a}
}

// Enqueue is EnqueueContext with context.Background(), as asynq's: the
// call is the running attempt's.
func (c *Client) Enqueue(task *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error) {
	return c.EnqueueContext(context.Background(), task, opts...)
}

// EnqueueContext enqueues task into the model's Redis, with the task's
// options then opts, the last of each kind winning (as asynq's). It
// returns the task's info as asynq's client does.
func (c *Client) EnqueueContext(ctx context.Context, task *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error) {
	if c.err != nil {
		return nil, c.err
	}
	if task == nil {
		return nil, errors.New("twiceasynq: Client.Enqueue got a nil task: build it with asynq.NewTask")
	}
	if strings.TrimSpace(task.Type()) == "" {
		return nil, errors.New("task typename cannot be empty") // asynq's own refusal
	}
	set := composeOptions(task, opts)
	if set.invalid != "" {
		return nil, errors.New(set.invalid) // asynq's own refusal
	}
	return c.q.enqueue(ctx, c.a, c.a.Effect, enqueued{typ: task.Type(), payload: task.Payload(), headers: taskHeaders(task), set: set}, nil)
}

// enqueued is one enqueue as asynq's client makes it: the task and its
// options, composed.
type enqueued struct {
	typ     string
	payload []byte
	headers map[string]string
	set     settings
}

// effectFunc is twice.Attempt.Effect's signature, and twice.FakeConn.Effect's.
type effectFunc func(ctx context.Context, kind, key string, payload any, do func(ctx context.Context) error) error

// errAggregation marks the refusal of a task enqueued in a Group.
var errAggregation = errors.New("the check does not play asynq's task aggregation")

// enqueue is asynq's client's enqueue for the attempt a, the one
// Client.EnqueueContext and the attempt's Redis (redis.go) share: a point
// of the attempt, an effect of kind EffectKind on the task's type (and
// queue) with its payload, refused as asynq's client refuses it, else
// recorded in the model's Redis as a follow-up. effect is the attempt's
// Effect (a.Effect, or the Effect of its worker's Redis connection). store,
// when not nil, writes the accepted task into the attempt's Redis too,
// inside the effect: an error from it leaves the task unrecorded.
func (q *queue) enqueue(ctx context.Context, a *twice.Attempt, effect effectFunc, e enqueued, store func(context.Context) error) (*asynq.TaskInfo, error) {
	set := e.set
	if set.group != "" {
		return nil, fmt.Errorf("twiceasynq: %w: %s was enqueued in Group(%q); check the aggregated task's handler as a job of its own", errAggregation, e.typ, set.group)
	}
	q.mu.Lock()
	st := q.byWorker[a.Pool]
	q.mu.Unlock()
	if st == nil {
		return nil, errors.New("twiceasynq: internal error: the attempt's client has no queue state")
	}
	key := e.typ
	if set.queue != defaultQueue {
		key += " (queue " + set.queue + ")"
	}
	var info *asynq.TaskInfo
	err := effect(ctx, EffectKind, key, e.payload, func(ctx context.Context) error {
		now := a.Now()
		q.mu.Lock()
		defer q.mu.Unlock()
		if err := q.refusedFollowUp(st, set, e.typ, e.payload, now); err != nil {
			return err
		}
		if store != nil {
			if err := store(ctx); err != nil {
				return err
			}
		}
		q.keys++
		n := len(st.followUps) + 1
		ft := &followUpTask{
			key: fmt.Sprintf("asynq-%d", q.keys), typ: e.typ, payload: e.payload, headers: e.headers,
			set: set, enqueuedAt: now, after: set.delay(now),
		}
		ft.id = set.taskID
		if ft.id == "" {
			ft.id = fmt.Sprintf("00000000-0000-4000-9000-%012d", n)
		}
		ft.state = statePending
		st.followUps = append(st.followUps, ft)
		info = &asynq.TaskInfo{ID: ft.id, Queue: set.queue, Type: ft.typ, Payload: ft.payload,
			State: asynq.TaskStatePending, MaxRetry: set.maxRetry, Timeout: set.timeout, Deadline: set.deadline,
			NextProcessAt: now.Add(ft.after), Retention: set.retention}
		setInfoHeaders(info, ft.headers) // headers.go
		if ft.after > 0 {
			info.State = asynq.TaskStateScheduled
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}

// followUpTask is a task a handler enqueued through its Client, as the
// model's Redis holds it.
type followUpTask struct {
	task
	key        string // FollowUp.Key: unique within the check
	typ        string
	payload    []byte
	headers    map[string]string
	set        settings
	enqueuedAt time.Time
	after      time.Duration // ProcessIn, or ProcessAt less the enqueue time
}

// due is when asynq's server makes the task available.
func (f *followUpTask) due() time.Time { return f.enqueuedAt.Add(f.after) }

// delay is how long after now asynq's server makes the task available.
func (s settings) delay(now time.Time) time.Duration {
	switch {
	case !s.processAt.IsZero():
		return max(s.processAt.Sub(now), 0)
	case s.processIn > 0:
		return s.processIn
	}
	return 0
}

// refusedFollowUp is asynq's client's refusal of an enqueue of task with
// set while the scenario's tasks are as st holds them, or nil: the Unique
// lock first (the queue, type and payload; held until its TTL runs out on
// the check's clock or the task succeeds), then the TaskID (in its queue,
// while stored).
func (q *queue) refusedFollowUp(st *checkState, set settings, typ string, payload []byte, now time.Time) error {
	key := uniqueKey{set.queue, typ, string(payload)}
	if set.uniqueTTL > 0 && q.uniqueLocked(st, key, now) {
		return asynq.ErrDuplicateTask
	}
	if q.idStored(st, set.queue, set.taskID) {
		if set.uniqueTTL > 0 {
			// asynq's script takes the lock before it finds the ID taken,
			// and keeps it for the refused task: only its TTL ends it.
			st.locks = append(st.locks, lock{key: key, until: now.Add(set.delay(now)).Add(set.uniqueTTL)})
		}
		return asynq.ErrTaskIDConflict
	}
	return nil
}

// uniqueKey is what asynq's Unique lock is on: the queue, the type and
// the payload.
type uniqueKey struct{ queue, typ, payload string }

// lock is a Unique lock no task releases (one a refused enqueue took).
type lock struct {
	key   uniqueKey
	until time.Time
}

// uniqueLocked says whether a task of the scenario holds the Unique lock
// on key at now: the checked task's while it is not done, a follow-up's
// until its TTL runs out (counted from when the task is due, as asynq's
// client sets it) or it is done.
func (q *queue) uniqueLocked(st *checkState, key uniqueKey, now time.Time) bool {
	if q.set.uniqueTTL > 0 && key == (uniqueKey{q.set.queue, q.job.Task.Type(), string(q.job.Task.Payload())}) {
		for _, t := range st.tasks {
			if t.state.uniqueLocked() {
				return true
			}
		}
	}
	for _, f := range st.followUps {
		if f.set.uniqueTTL > 0 && f.state.uniqueLocked() && now.Before(f.enqueuedAt.Add(f.after).Add(f.set.uniqueTTL)) &&
			key == (uniqueKey{f.set.queue, f.typ, string(f.payload)}) {
			return true
		}
	}
	for _, l := range st.locks {
		if l.key == key && now.Before(l.until) {
			return true
		}
	}
	return false
}

// idStored says whether a task of the scenario with ID id is stored in
// queue (false for no ID).
func (q *queue) idStored(st *checkState, queue, id string) bool {
	if id == "" {
		return false
	}
	for _, t := range st.tasks {
		if t.id == id && q.set.queue == queue && t.state.stored() {
			return true
		}
	}
	for _, f := range st.followUps {
		if f.id == id && f.set.queue == queue && f.state.stored() {
			return true
		}
	}
	return false
}

// followUp is the follow-up task of key in st, or nil.
func (st *checkState) followUp(key string) *followUpTask {
	for _, f := range st.followUps {
		if f.key == key {
			return f
		}
	}
	return nil
}

// pending lists the tasks the scenario's handlers enqueued, in the order
// asynq's server takes them: by when they are due, then in the order they
// were enqueued. A task whose type Job.Mux routes nowhere has no Run.
func (q *queue) pending(_ context.Context, db *pgxpool.Pool) ([]twice.FollowUp, error) {
	q.mu.Lock()
	var list []*followUpTask
	if st := q.checks[db]; st != nil {
		list = slices.Clone(st.followUps)
	}
	q.mu.Unlock()
	slices.SortStableFunc(list, func(a, b *followUpTask) int { return a.due().Compare(b.due()) })
	var out []twice.FollowUp
	for _, f := range list {
		fu := twice.FollowUp{Key: f.key, Kind: f.typ, After: f.after, MaxDeliveries: f.set.maxRetry + 1}
		if q.routed(f.typ) {
			fu.Run = q.workFollowUp(f.key)
		}
		out = append(out, fu)
	}
	return out, nil
}

// routed tells whether Job.Mux has a handler for typ. A Mux function that
// cannot build its mux without a real attempt counts every type as routed.
func (q *queue) routed(typ string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = true
		}
	}()
	mux := q.job.Mux(&twice.Attempt{})
	if mux == nil {
		return true // workFollowUp says what is wrong
	}
	_, pattern := mux.Handler(asynq.NewTask(typ, nil))
	return pattern != ""
}

// workFollowUp is one delivery of the follow-up task of key: asynq's
// processor calling the mux (its middlewares, then the handler for the
// task's type) with the task and asynq's context.
func (q *queue) workFollowUp(key string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		q.mu.Lock()
		var f followUpTask
		if st := q.byWorker[a.Pool]; st != nil && st.followUp(key) != nil {
			f = *st.followUp(key)
		}
		q.mu.Unlock()
		if f.key == "" {
			return fmt.Errorf("twiceasynq: internal error: the follow-up %s was not enqueued", key)
		}
		tctx, cancel, err := taskContext(ctx, taskMetadata{
			ID: f.id, Type: f.typ, Queue: f.set.queue,
			MaxRetry: f.set.maxRetry, RetryCount: f.retried, Deadline: f.set.deadlineFrom(time.Now()), // a real deadline, as the checked task's
		})
		if err != nil {
			return fmt.Errorf("twiceasynq: building asynq's handler context: %w", err)
		}
		defer cancel()
		return q.running(a, func() error {
			mux := q.job.Mux(a)
			if mux == nil {
				return errors.New("twiceasynq: Job.Mux returned a nil mux")
			}
			return mux.ProcessTask(tctx, newTask(f.typ, f.payload, f.headers))
		})
	}
}

// fetchFollowUp is asynq's server handing the follow-up of key to a
// worker, unless asynq no longer delivers it.
func (q *queue) fetchFollowUp(st *checkState, d twice.Delivery) (string, error) {
	f := st.followUp(d.FollowUp)
	if f == nil {
		return "", fmt.Errorf("twiceasynq: internal error: the follow-up %s was not enqueued", d.FollowUp)
	}
	if !f.state.stored() || f.state == stateArchived || f.state == stateCompleted {
		return fmt.Sprintf("asynq does not deliver a task that is %s", f.state), nil
	}
	f.state = stateActive
	f.retried = d.Number - 1
	return "", nil
}

// settleFollowUp is asynq's processor after the follow-up's handler
// returned, under the follow-up's own options.
func settleFollowUp(f *followUpTask, err error) {
	switch {
	case err == nil && f.set.retention > 0:
		f.state = stateCompleted
	case err == nil, isRevoke(err):
		f.state = stateDeleted
	case errors.Is(err, asynq.SkipRetry), f.retried >= f.set.maxRetry:
		f.state = stateArchived
	default:
		f.state = stateRetry
	}
}
