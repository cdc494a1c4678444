package twicegue

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/vgarvardt/gue/v5"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// Job is a gue job under a check: the job a producer enqueues, the work
// functions gue's worker would run, the application's schema and the data
// every scenario starts from.
type Job struct {
	// Name names the job in reports; it defaults to the job's Type.
	Name string
	// Schema is the application's schema; gue's table (Migrations) is
	// added before it.
	Schema pgfixture.Schema
	// Seed inserts the data every scenario starts from (see twice.Job.Seed).
	Seed func(ctx context.Context, tx pgx.Tx) error
	// Job is the job as the producer enqueues it: Type, Args, Queue and
	// Priority (its ID, RunAt and the rest are gue's).
	Job *gue.Job
	// WorkMap returns gue's work functions for one attempt, built on the
	// attempt's handles (a.Pool, a.Mailer, a.HTTP...). The one for the
	// job's Type gets a real *gue.Job locked in its own transaction (j.Tx(),
	// on a.Pool through gue's pgx v5 adapter): work done in j.Tx() commits
	// with the job's deletion, gue's ack.
	WorkMap func(a *twice.Attempt) gue.WorkMap
	// WorkFollowUps works the jobs the work function enqueues (and what
	// those enqueue) with WorkMap after the reference run and every
	// scenario, as gue's workers would, then compares the world at rest
	// (see twice.WorkFollowUps). A follow-up whose type WorkMap lacks
	// stays a row, and the report says so. False: the follow-ups are
	// compared as rows, never worked.
	WorkFollowUps bool
	// Backoff is the client's backoff (gue.WithClientBackoff; default
	// gue.DefaultExponentialBackoff). Only whether it discards the job (a
	// negative duration) matters: the check's clock moves to the retry.
	Backoff gue.Backoff
}

// Check checks the job as gue runs it and returns the report; it never
// fails a test. opts are twice's options, applied after gue's semantics.
func Check(ctx context.Context, job Job, opts ...twice.Option) *twice.Report {
	j, qopts := job.Twice()
	return twice.Check(ctx, j, append(qopts, opts...)...)
}

// AssertIdempotent is twice.AssertIdempotent for a gue job: it stops the
// test (Fatalf) with the report when the job breaks a promise.
func AssertIdempotent(tb twice.TB, job Job, opts ...twice.Option) {
	tb.Helper()
	j, qopts := job.Twice()
	twice.AssertIdempotent(tb, j, append(qopts, opts...)...)
}

// ExpectIdempotent is AssertIdempotent that lets the test go on (Errorf);
// it reports whether the job kept every promise.
func ExpectIdempotent(tb twice.TB, job Job, opts ...twice.Option) bool {
	tb.Helper()
	j, qopts := job.Twice()
	return twice.ExpectIdempotent(tb, j, append(qopts, opts...)...)
}

// Twice returns the job as twice sees it and gue's delivery semantics as
// twice options, for twice.Check, twice.AssertIdempotent or a rapid
// property. The job may be checked any number of times, in parallel too.
func (job Job) Twice() (twice.Job, []twice.Option) {
	q := newQueue(job)
	name := job.Name
	if name == "" && job.Job != nil {
		name = job.Job.Type
	}
	return twice.Job{
		Name:   name,
		Schema: pgfixture.Migrations(Migrations(), job.Schema),
		Seed:   job.Seed,
		Run:    q.run,
	}, q.options()
}
