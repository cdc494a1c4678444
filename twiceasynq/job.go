package twiceasynq

import (
	"context"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// Job is an asynq handler under a check: the task a producer enqueues, the
// handler asynq's server would run, the application's schema and the data
// every scenario starts from.
type Job struct {
	// Name names the job in reports; it defaults to the task's type.
	Name string
	// Schema is the application's schema (asynq keeps its own state in
	// Redis, so it adds no tables).
	Schema pgfixture.Schema
	// Seed inserts the data every scenario starts from (see twice.Job.Seed).
	Seed func(ctx context.Context, tx pgx.Tx) error
	// Task is the task as the producer builds it: asynq.NewTask (or
	// NewTaskWithHeaders) with its options.
	Task *asynq.Task
	// Options are the options the producer passes to Client.Enqueue; as in
	// asynq, they override the task's own.
	Options []asynq.Option
	// Handler returns the handler for one attempt, built on the attempt's
	// handles (a.Pool, a.DB, a.Mailer, a.HTTP...). Its ProcessTask gets a
	// task with the Task's type, payload and headers, and a context that
	// carries what asynq's server puts there: asynq.GetTaskID,
	// GetRetryCount, GetMaxRetry, GetQueueName and the task's deadline.
	Handler func(a *twice.Attempt) asynq.Handler
	// Mux returns the application's asynq.ServeMux for one attempt, built
	// on the attempt's handles: the mux the application gives its
	// asynq.Server. When it is set, the check works the tasks the handler
	// enqueues through NewClient(a), and what those enqueue, after every
	// scenario, each with the mux (see twice.WorkFollowUps); then it
	// compares the world. A task whose type the mux does not route stays
	// enqueued, and the report says so. Mux is also called with an empty
	// *twice.Attempt, to learn which types it routes: build the handlers
	// there, use the attempt's handles only when they run.
	Mux func(a *twice.Attempt) *asynq.ServeMux
	// Cronspec is the cronspec the app's asynq.Scheduler registers this
	// task with (Scheduler.Register, or a PeriodicTaskConfig's), or "".
	// asynq's scheduler enqueues the next run as a new task with the same
	// type, payload and options; the check plays it after every scenario,
	// at the cronspec's next time on the check's clock
	// (twice.PeriodicSchedule). A task asynq archived is then no finding
	// when its next run succeeds.
	Cronspec string
	// SchedulerLocation is the scheduler's asynq.SchedulerOpts.Location,
	// the time zone of Cronspec's times; nil is UTC, as in asynq.
	SchedulerLocation *time.Location
}

// Check checks the handler as asynq runs it and returns the report; it
// never fails a test. opts are twice's options, applied after asynq's
// semantics.
func Check(ctx context.Context, job Job, opts ...twice.Option) *twice.Report {
	j, qopts := job.Twice()
	return twice.Check(ctx, j, append(qopts, opts...)...)
}

// AssertIdempotent is twice.AssertIdempotent for an asynq handler: it stops
// the test (Fatalf) with the report when the handler breaks a promise.
func AssertIdempotent(tb twice.TB, job Job, opts ...twice.Option) {
	tb.Helper()
	j, qopts := job.Twice()
	twice.AssertIdempotent(tb, j, append(qopts, opts...)...)
}

// ExpectIdempotent is AssertIdempotent that lets the test go on (Errorf);
// it reports whether the handler kept every promise.
func ExpectIdempotent(tb twice.TB, job Job, opts ...twice.Option) bool {
	tb.Helper()
	j, qopts := job.Twice()
	return twice.ExpectIdempotent(tb, j, append(qopts, opts...)...)
}

// Twice returns the job as twice sees it and asynq's delivery semantics as
// twice options, for twice.Check, twice.AssertIdempotent or a rapid
// property. The job may be checked any number of times, in parallel too.
func (job Job) Twice() (twice.Job, []twice.Option) {
	q := newQueue(job)
	name := job.Name
	if name == "" && job.Task != nil {
		name = job.Task.Type()
	}
	opts := q.options()
	periodic, err := job.periodic()
	if q.set.invalid != "" {
		err = fmt.Errorf("twiceasynq: asynq's client refuses the task's options (Job.Task and Job.Options): %s", q.set.invalid)
	}
	if err != nil {
		// The check's clean run fails with what to fix.
		return twice.Job{Name: name, Schema: job.Schema, Seed: job.Seed,
			Run: func(context.Context, *twice.Attempt) error { return err }}, opts
	}
	if periodic != nil {
		opts = append(opts, periodic)
	}
	if job.Mux != nil {
		opts = append(opts, twice.WorkFollowUps(q.pending)) // followups.go
	}
	return twice.Job{Name: name, Schema: job.Schema, Seed: job.Seed, Run: q.run}, opts
}
