package twicetemporal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// queue plays Temporal for one check: the server's side (the heartbeat
// details it keeps, its retries) and the worker's (each attempt run by the
// SDK's own activity test environment).
type queue struct {
	act Activity
	// lag is how many heartbeats older than the last one that reached the
	// server a retry resumes from (0: the last).
	lag int

	mu       sync.Mutex
	checks   map[*pgxpool.Pool]*checkState // by the check's own pool
	byWorker map[*pgxpool.Pool]*checkState // by the attempts' pools
	maxBeats int                           // the most heartbeats one attempt recorded
}

// checkState is what the queue knows of one check (checks of the same
// activity may run in parallel).
type checkState struct {
	control *pgxpool.Pool
	resume  map[delivery]*commonpb.Payloads // the details each delivery resumes from
}

type delivery struct {
	jobID  string
	number int
}

func newQueue(act Activity, lag int) *queue {
	return &queue{act: act, lag: lag, checks: map[*pgxpool.Pool]*checkState{}, byWorker: map[*pgxpool.Pool]*checkState{}}
}

// heartbeatsSeen is the most heartbeats one attempt recorded in the checks
// so far: the older checkpoints a retry may resume from.
func (q *queue) heartbeatsSeen() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.maxBeats
}

// check is the state of the check whose own pool is db.
func (q *queue) check(db *pgxpool.Pool) *checkState {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.checks[db]
	if st == nil {
		st = &checkState{control: db, resume: map[delivery]*commonpb.Payloads{}}
		q.checks[db] = st
	}
	return st
}

// heartbeatSchema is the server's record of the heartbeats that reached it,
// in a schema of its own. Its rows are not compared (options leaves them
// out): they are the server's, not what the activity did. They are part of
// the world a crash leaves, so that a crash just before a heartbeat and one
// just after it are two crash states.
var heartbeatSchema = pgfixture.SQL(`
CREATE SCHEMA twicetemporal;
CREATE TABLE twicetemporal.heartbeat (
	id bigserial PRIMARY KEY,
	job_id text NOT NULL,
	attempt int NOT NULL,
	details bytea
)`)

// job is the activity as twice runs it.
func (q *queue) job() twice.Job {
	name := q.act.name()
	if q.lag > 0 {
		name += fmt.Sprintf(", retried from %d heartbeat(s) before the last", q.lag)
	}
	return twice.Job{
		Name:   name,
		Schema: pgfixture.Migrations(heartbeatSchema, q.act.Schema),
		Seed:   q.act.Seed,
		Run:    q.run,
	}
}

// options are Temporal's semantics as twice options.
func (q *queue) options() []twice.Option {
	opts := []twice.Option{
		twice.TerminalError(q.nonRetryable),
		twice.QueueBookkeeping(q.fetch, nil),
		twice.ExcludeRows("twicetemporal.heartbeat", "true"), // the server's record, not the activity's
		twice.QueueWordsOf(q.words),
		twice.WithoutDuplicateEnqueue("Temporal schedules an activity once, from its workflow's history: every retry keeps its workflow ID and activity ID"),
	}
	if p := q.act.Options.RetryPolicy; p != nil && p.MaximumAttempts > 0 {
		opts = append(opts, twice.MaxDeliveries(int(p.MaximumAttempts)))
	}
	if why := q.act.overlapsOff(); why != "" {
		opts = append(opts, twice.WithoutConcurrency(why))
	}
	if periodic, err := q.act.periodic(); err == nil && periodic != nil {
		opts = append(opts, periodic) // an error is the check's refusal (problem)
	}
	return opts
}

// nonRetryable says whether Temporal's server would not retry err: an
// application error marked non-retryable, or one whose type is in the
// retry policy's NonRetryableErrorTypes.
func (q *queue) nonRetryable(err error) bool {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return false
	}
	if app.NonRetryable() {
		return true
	}
	p := q.act.Options.RetryPolicy
	return p != nil && slices.Contains(p.NonRetryableErrorTypes, app.Type())
}

// fetch is the server dispatching an attempt: it hands the attempt the
// details of the last heartbeat that reached it (or, under a lag, of an
// older one).
func (q *queue) fetch(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (string, error) {
	st := q.check(db)
	q.mu.Lock()
	q.byWorker[d.Pool] = st
	q.mu.Unlock()
	var raw []byte
	err := db.QueryRow(ctx, `SELECT details FROM twicetemporal.heartbeat WHERE job_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1`,
		d.JobID, q.lag).Scan(&raw)
	var details *commonpb.Payloads
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return "", fmt.Errorf("reading the heartbeats: %w", err)
	case raw != nil:
		details = &commonpb.Payloads{}
		if err := proto.Unmarshal(raw, details); err != nil {
			return "", fmt.Errorf("decoding a heartbeat's details: %w", err)
		}
	}
	q.mu.Lock()
	st.resume[delivery{d.JobID, d.Number}] = details
	q.mu.Unlock()
	return "", nil
}

// reached records that a heartbeat reached the server, on the check's own
// connection (not a point of the attempt).
func (q *queue) reached(ctx context.Context, st *checkState, jobID string, attempt int, details *commonpb.Payloads) error {
	var raw []byte
	if details != nil {
		var err error
		if raw, err = proto.Marshal(details); err != nil {
			return err
		}
	}
	_, err := st.control.Exec(context.WithoutCancel(ctx),
		`INSERT INTO twicetemporal.heartbeat (job_id, attempt, details) VALUES ($1, $2, $3)`, jobID, attempt, raw)
	return err
}

// countBeats keeps the most heartbeats one attempt recorded.
func (q *queue) countBeats(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.maxBeats = max(q.maxBeats, n)
}

// discard is the activity logger's handler: activity.GetLogger works, and
// prints nothing into the test's output.
var discard = log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

// run is one attempt: the SDK's activity test environment executing the
// activity, with the attempt's context as the worker's background context
// and an interceptor that makes heartbeats points and reports the attempt's
// info.
func (q *queue) run(ctx context.Context, a *twice.Attempt) error {
	q.mu.Lock()
	st := q.byWorker[a.Pool]
	var details *commonpb.Payloads
	if st != nil {
		details = st.resume[delivery{a.JobID, a.Number}]
	}
	q.mu.Unlock()
	if st == nil {
		return errors.New("twicetemporal: internal error: the attempt was not dispatched")
	}
	if _, err := q.act.periodic(); err != nil {
		return err
	}
	if q.act.Activity == nil {
		return errors.New("twicetemporal: the activity is nil: set Activity.Activity to a function returning the activity built on the attempt's handles")
	}
	activityFn := q.act.Activity(a)
	if err := validate(activityFn, q.act.Args); err != nil {
		return err
	}
	bctx, cancel := context.WithTimeout(ctx, q.act.startToClose())
	defer cancel()
	att := &attemptState{q: q, st: st, a: a, details: details}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(discard)
	env := suite.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{
		BackgroundActivityContext: bctx,
		Interceptors:              []interceptor.WorkerInterceptor{&workerInterceptor{att: att}},
	})
	env.RegisterActivity(activityFn)
	_, err := env.ExecuteActivity(activityFn, q.act.Args...)
	q.countBeats(att.beats())
	if f := att.failed(); f != nil {
		return f // the server's record of a heartbeat failed: say so, whatever the activity did
	}
	return err
}
