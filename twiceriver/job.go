package twiceriver

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// Job is a River worker under a check: the job River would run, with the
// application's schema and the data every scenario starts from.
type Job[T river.JobArgs] struct {
	// Name names the job in reports; it defaults to the args' Kind().
	Name string
	// Schema is the application's schema; River's own tables (river_job and
	// the others, from River's migrations) are added before it.
	Schema pgfixture.Schema
	// Seed inserts the data every scenario starts from (see twice.Job.Seed).
	Seed func(ctx context.Context, tx pgx.Tx) error
	// Args are the job's args, inserted into river_job with River's client
	// (InsertTx) as a producer would, with InsertOpts (nil: the args' own).
	Args       T
	InsertOpts *river.InsertOpts
	// Worker returns the worker for one attempt, built on the attempt's
	// handles: its pool (a.Pool, on which River's client runs too), its
	// mailer, its HTTP client. River calls its Work with a real *river.Job[T]
	// and a context carrying a real *river.Client.
	Worker func(a *twice.Attempt) river.Worker[T]
	// Workers returns the application's River workers bundle for one
	// attempt of a follow-up, built on the attempt's handles as Worker is:
	// the *river.Workers the application gives its client. When it is set,
	// the check works the jobs the worker enqueues (and what those
	// enqueue) after the reference run and every scenario, with a real
	// river.Client running these workers, then compares the world at rest
	// (see twice.WorkFollowUps). A follow-up whose kind the bundle does
	// not register stays a row, and the report says so. Nil: the
	// follow-ups are compared as rows, never worked.
	Workers func(a *twice.Attempt) *river.Workers
	// Config is the application's river.Config, the one its client runs
	// with. The check runs Work through the parts that shape a worker's run,
	// as River's executor does: Middleware (and WorkerMiddleware) around
	// every worker, Hooks (WorkBegin, WorkEnd; the insert ones on the jobs
	// it inserts), JobTimeout, RescueStuckJobsAfter, MaxAttempts and
	// RetryPolicy. Its Workers, Queues, periodic jobs and Schema are not
	// used (River's tables are in the check's database). Nil: River's
	// defaults.
	Config *river.Config
	// JobTimeout is the client's JobTimeout, used when the worker's Timeout
	// is 0; it overrides Config's. Default river.JobTimeoutDefault (1
	// minute).
	JobTimeout time.Duration
	// RescueStuckJobsAfter is the client's; it overrides Config's. Default
	// one hour (plus JobTimeout when that is set), as River's.
	RescueStuckJobsAfter time.Duration
	// Periodic is the schedule of the app's periodic job that inserts these
	// args (the one given to river.NewPeriodicJob), or nil. River's
	// periodic enqueuer inserts the next run as a new job with the same
	// args; the check plays it after every scenario, at the schedule's next
	// time on the check's clock (twice.PeriodicSchedule). A job River gave
	// up on is then no finding when its next run succeeds. The next run
	// replays Args: for a periodic job whose constructor builds each run's
	// args (a month, a cursor, time.Now()), use PeriodicJob.
	Periodic river.PeriodicSchedule
	// PeriodicJob is the app's periodic job whose constructor builds each
	// run's args, or nil. It replaces Periodic and Args: every run's args
	// are the constructor's (see PeriodicJob). InsertOpts stands in for
	// the constructor's nil insert options. Args is used only for its
	// type's methods (Kind, InsertOpts, Hooks): leave it zero.
	PeriodicJob *PeriodicJob[T]
}

// PeriodicJob is a periodic job as the app gives it to river.NewPeriodicJob:
// its schedule and the constructor River's periodic enqueuer calls at every
// run to build that run's args. River's *river.PeriodicJob keeps both
// unexported, so the check takes them here. The first run (and a duplicate
// of it) is inserted with the constructor's args at the check's clock when
// it is first delivered. The next run plays at the schedule's next time on
// the check's clock, inserted with the constructor's args built then. The
// check thus compares the next run River inserts, not a replay of the
// first.
type PeriodicJob[T river.JobArgs] struct {
	// Schedule is the schedule given to river.NewPeriodicJob; nil plays no
	// next run.
	Schedule river.PeriodicSchedule
	// Args builds one run's args and insert options at now, the run's time
	// on the check's clock. It is the app's constructor with its
	// time.Now() taken as a parameter; the app gives River
	// func() (river.JobArgs, *river.InsertOpts) { return Args(time.Now()) }.
	// Nil insert options are Job.InsertOpts; River merges them with the
	// args' InsertOpts field by field, as for any insert.
	Args func(now time.Time) (T, *river.InsertOpts)
	// Constructor is the constructor given to river.NewPeriodicJob, used
	// when Args is nil. Its args must decode into T (they are inserted as
	// River inserts them, as JSON). It reads the wall clock, not the
	// check's: a constructor built on time.Now() gives the next run the
	// first run's month, so prefer Args. Nil args mean River inserts no job
	// for that run, and the check delivers none.
	Constructor river.PeriodicJobConstructor
}

// build is the constructor at now: a run's args and insert options, or
// nil args when the constructor inserts no job.
func (p *PeriodicJob[T]) build(now time.Time) (river.JobArgs, *river.InsertOpts) {
	switch {
	case p.Args != nil:
		args, opts := p.Args(now)
		return args, opts
	case p.Constructor != nil:
		return p.Constructor()
	}
	return nil, nil
}

// config is the client's config as River fills it in (WithDefaults), with
// the job's JobTimeout and RescueStuckJobsAfter over Config's.
func (job Job[T]) config() *river.Config {
	var c river.Config
	if job.Config != nil {
		c = *job.Config
	}
	if job.JobTimeout != 0 {
		c.JobTimeout = job.JobTimeout
	}
	if job.RescueStuckJobsAfter != 0 {
		c.RescueStuckJobsAfter = job.RescueStuckJobsAfter
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Queues, c.Workers, c.PeriodicJobs = nil, nil, nil
	// River's tables are in the check's database's own schema (Migrations).
	c.Schema = ""
	// The worker may insert follow-up jobs whose workers this check does
	// not know.
	c.SkipUnknownJobCheck = true
	return c.WithDefaults()
}

// overlapsOff says why River never runs the job twice at once. Only
// River's rescuer runs a job that is still running, and only once the
// worker's timeout (its Timeout, else the config's JobTimeout) ran out and
// the job has been running past RescueStuckJobsAfter; a job without a
// timeout (-1) it never rescues (river/internal/maintenance, JobRescuer).
// By then the first run's context has ended: a worker that runs its
// statements on the context River gave it cannot commit anything after the
// rescue. A worker that detaches from that context (context.WithoutCancel)
// can, and the check does not play that: the reason says so.
func (job Job[T]) overlapsOff() string {
	if job.Worker == nil {
		return ""
	}
	timeout, rescue := job.timeouts()
	if timeout <= 0 {
		return "River's rescuer never runs a job again while its worker has no timeout (Timeout -1), so River never runs it twice at once (the check assumes the worker keeps to the context River gives it)"
	}
	return fmt.Sprintf("River's rescuer runs a job again only after its timeout (%s) ran out and it has been running past RescueStuckJobsAfter (%s): the first run's context has ended by then, so River never runs it twice at once (the check assumes the worker keeps to the context River gives it)", timeout, rescue)
}

// timeouts are the worker's timeout as River's executor and rescuer take
// it (its Timeout, else the config's JobTimeout; negative: none) and
// River's rescue horizon. A Worker function that cannot build a worker
// without a real attempt counts as the config's JobTimeout.
func (job Job[T]) timeouts() (timeout, rescue time.Duration) {
	cfg := job.config()
	timeout, rescue = cfg.JobTimeout, cfg.RescueStuckJobsAfter
	defer func() {
		if recover() != nil {
			timeout = cfg.JobTimeout
		}
	}()
	w := job.Worker(&twice.Attempt{})
	if t := w.Timeout(&river.Job[T]{JobRow: &rivertype.JobRow{}, Args: job.Args}); t != 0 {
		timeout = t
	}
	return timeout, rescue
}

// Check checks the worker as River runs it and returns the report; it never
// fails a test. opts are twice's options, applied after River's semantics.
func Check[T river.JobArgs](ctx context.Context, job Job[T], opts ...twice.Option) *twice.Report {
	j, ropts := job.Twice()
	return twice.Check(ctx, j, append(ropts, opts...)...)
}

// AssertIdempotent is twice.AssertIdempotent for a River worker: it stops
// the test (Fatalf) with the report when the worker breaks a promise.
func AssertIdempotent[T river.JobArgs](tb twice.TB, job Job[T], opts ...twice.Option) {
	tb.Helper()
	j, ropts := job.Twice()
	twice.AssertIdempotent(tb, j, append(ropts, opts...)...)
}

// ExpectIdempotent is AssertIdempotent that lets the test go on (Errorf);
// it reports whether the worker kept every promise.
func ExpectIdempotent[T river.JobArgs](tb twice.TB, job Job[T], opts ...twice.Option) bool {
	tb.Helper()
	j, ropts := job.Twice()
	return twice.ExpectIdempotent(tb, j, append(ropts, opts...)...)
}

// Twice returns the job as twice sees it and River's delivery semantics as
// twice options, for twice.Check, twice.AssertIdempotent or a rapid
// property. The job may be checked any number of times, in parallel too.
func (job Job[T]) Twice() (twice.Job, []twice.Option) {
	q := newQueue(job)
	name := job.Name
	if name == "" {
		name = job.Args.Kind()
	}
	j := twice.Job{
		Name: name,
		// River's tables by rivermigrate itself, then the job's own schema.
		Schema: pgfixture.Migrations(Migrations(), job.Schema),
		Seed:   job.Seed,
		Run:    q.run,
	}
	opts := q.options()
	if why := job.overlapsOff(); why != "" {
		opts = append(opts, twice.WithoutOverlappingDeliveries(why))
	}
	switch {
	case job.PeriodicJob != nil && job.PeriodicJob.Schedule != nil:
		opts = append(opts, twice.PeriodicSchedule(job.PeriodicJob.Schedule.Next))
	case job.PeriodicJob == nil && job.Periodic != nil:
		opts = append(opts, twice.PeriodicSchedule(job.Periodic.Next))
	}
	return j, opts
}
