package twice

import (
	"context"
	"fmt"
	"time"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/attempt"
	"github.com/twicekit/twicekit/internal/goroutines"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/queue"
)

type attemptKey struct{}

// origin of the effect calls made with ctx.
func attemptOf(ctx context.Context) *Attempt {
	a, _ := ctx.Value(attemptKey{}).(*Attempt)
	return a
}

// runAttempt runs one delivery of the job on the check's worker and waits
// for it (at most the attempt timeout). ackLost crashes the attempt after its
// job function returned, before the ack.
func (c *checker) runAttempt(ctx context.Context, jobID string, number int, plan inject.Plan, ackLost bool) AttemptRecord {
	rec := c.startAttempt(ctx, c.Worker, jobID, number, plan).wait(c.cfg.AttemptTimeout, ackLost)
	c.afterAttempt(ctx, &rec, ackLost)
	return rec
}

// runningAttempt is an attempt whose job function runs on its own goroutine.
type runningAttempt struct {
	c      *checker
	worker *inject.Worker
	run    *inject.Run
	rec    AttemptRecord
	done   chan attempt.Exit
	label  string    // the pprof label of the job's goroutines (internal/goroutines; waited on in internal/queue)
	names  *baseURLs // w's base-URL servers: hosts, not loopback ports, in its error and panic (baseurl.go)
}

// startAttempt starts one delivery of the job on worker w and returns at once.
func (c *checker) startAttempt(ctx context.Context, w *inject.Worker, jobID string, number int, plan inject.Plan) *runningAttempt {
	skip := c.QueueFetch(ctx, &c.cfg.queue.Config, w.Pool, jobID, number)
	name := fmt.Sprintf("attempt %d of %s", number, jobID)
	rctx, run := inject.Start(ctx, name, plan)
	run.OnCrash(w.Cut)
	h := c.HandlesOf(w)
	a := &Attempt{
		JobID:    jobID,
		Number:   number,
		Pool:     w.Pool,
		DB:       w.DB,
		Mailer:   h.Mailer,
		Webhooks: h.Webhooks,
		HTTP:     h.HTTP,
		Payments: effects.ProviderURL,
		SMTP:     h.Fakes.SMTP,
		clock:    c.Now,
		recorder: h.Recorder,
		baseURLs: h.BaseURLs,
		fakes:    h.Fakes,

		throughDefault: c.ThroughDefault,
	}
	rctx = context.WithValue(rctx, attemptKey{}, a)
	_, kind, jobRun := c.FollowUpOf(jobID) // internal/checkstate
	if jobRun == nil {
		jobRun = c.job.Run
	}
	ra := &runningAttempt{c: c, worker: w, run: run, rec: AttemptRecord{JobID: jobID, Number: number, kind: kind}, done: make(chan attempt.Exit, 1), names: h.BaseURLs}
	if skip != "" {
		ra.rec.NotDelivered, ra.rec.Note = true, skip
		ra.done <- attempt.Exit{}
		return ra
	}
	ra.rec.SessionState = c.BeforeAttempt(ctx, w) // internal/checkstate: before the attempt owns w
	ra.label = goroutines.NextLabel()
	c.Begin(name, run, w, a) // a call on w's handles without the attempt's context is this attempt's
	attempt.Go(run, ra.label, ra.done, jobRun, rctx, a)
	return ra
}

// Run is the attempt's run, for a scheduler.
func (ra *runningAttempt) Run() *inject.Run { return ra.run }

// wait waits for the job function to return, at most timeout; an attempt
// still running then is crashed and reported as hung.
func (ra *runningAttempt) wait(timeout time.Duration, ackLost bool) AttemptRecord {
	rec := ra.rec
	res := attempt.Wait(ra.run, ra.done, timeout, attempt.GraceAfterCancel, ackLost, ra.c.cfg.queue.Snooze, func() {
		rec.Slow = ra.c.RunningInPostgres(ra.run) // internal/checkstate
		if rec.Slow {
			rec.LockHolder = ra.c.LockHolder(ra.run)
		}
	})
	rec.Hung, rec.Leaked, rec.CrashedBeforeAck = res.Hung, res.Leaked, res.CrashedBeforeAck
	ra.run.Ack() // the goroutines on a context that outlives the attempt go on (internal/queue)
	rec.AfterRun, rec.afterRunSites, rec.outlived = queue.AfterRun(ra.label, ra.run, rec.Hung)
	ra.run.Finish()
	ra.c.End(ra.run, ra.worker)
	rec.Points = ra.run.Steps()
	rec.Crashed, rec.CrashAt, rec.Reason = ra.run.Crashed()
	rec.crashedAfterAck = ra.run.CrashedAfterAck()
	rec.Err, rec.Panic, rec.Goexit = res.Err, res.Panic, res.Goexit
	rec.Err, rec.Panic = ra.names.NameErr(rec.Err), ra.names.NameIn(rec.Panic)
	rec.closedPool = closedPool(res.Err, ra.worker.Pool) // closed_pool.go
	if rec.Crashed {
		ra.worker.Heal()
	}
	return rec
}
