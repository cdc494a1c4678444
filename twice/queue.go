package twice

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A queue's delivery semantics, where they differ from the generic
// at-least-once queue's: which errors end a job, which mean "later", whether
// the ack commits in the job's own transaction, the queue's own rows and its
// words. A queue adapter (package twiceriver for River) sets them from the
// real library; any other queue uses the same options.

// Delivery is one delivery of a job as a queue's hooks see it.
type Delivery struct {
	// JobID is the check's ID of the job ("job-1"); redeliveries keep it.
	JobID string
	// Number counts the deliveries of this job ID in the scenario, from 1.
	Number int
	// Err is what the attempt returned (nil before it ran, and on success).
	Err error
	// Pool is the pool the attempt gets as Attempt.Pool (set for fetch): it
	// tells one check's attempts from another's when checks run in parallel.
	Pool *pgxpool.Pool
}

// QueueHook is a hook of the queue, called on the check's own connection
// pool: its statements are not points of any attempt and are never crashed.
type QueueHook func(ctx context.Context, db *pgxpool.Pool, d Delivery) error

type queueConfig struct {
	terminal func(error) bool
	snooze   func(error) bool
	acked    func(ctx context.Context, db *pgxpool.Pool, d Delivery) (bool, error)
	fetch    func(ctx context.Context, db *pgxpool.Pool, d Delivery) (string, error)
	settle   QueueHook
	describe func(s Scenario, generic string) string
}

// TerminalError says which errors end the job: an attempt returning one is
// neither a failed run nor delivered again (River's JobCancel, asynq's
// SkipRetry). A reference run that returns one passes.
func TerminalError(is func(err error) bool) Option {
	return optionFunc(func(c *config) { c.queue.terminal = is })
}

// SnoozeError says which errors ask the queue to deliver the job again later
// (River's JobSnooze): a delivery, not a failure, so it does not count
// towards MaxDeliveries; a job that snoozes MaxDeliveries times in a row is
// reported as never finishing.
func SnoozeError(is func(err error) bool) Option {
	return optionFunc(func(c *config) { c.queue.snooze = is })
}

// AckInJobTransaction says the job's ack can commit in the job's own
// transaction (River's JobCompleteTx, gue's job deleted in j.Tx()). After
// every attempt the check asks acked, on its own connections, whether the
// ack had committed before the queue's own ack (or its loss): when it had,
// the queue never delivers the job again, whether the attempt crashed
// afterwards, its ack was lost, or it returned an error. River's: SELECT
// state FROM river_job WHERE id = … is 'completed'.
func AckInJobTransaction(acked func(ctx context.Context, db *pgxpool.Pool, d Delivery) (bool, error)) Option {
	return optionFunc(func(c *config) { c.queue.acked = acked })
}

// QueueBookkeeping keeps the queue's own rows as the real queue does. fetch
// runs before every delivery (River: the job's row inserted on first
// delivery, then set running, its attempt counted); a non-empty reason
// means the queue would not deliver the job now (its completion committed)
// and the attempt does not run. settle runs after every attempt whose
// queue ack was not lost (River's completer: completed, cancelled,
// snoozed, retryable). Either may be nil.
func QueueBookkeeping(fetch func(ctx context.Context, db *pgxpool.Pool, d Delivery) (skip string, err error), settle QueueHook) Option {
	return optionFunc(func(c *config) { c.queue.fetch, c.queue.settle = fetch, settle })
}

// QueueWords describes the scenarios in the queue's own words on the
// headlines of findings: describe gets the scenario and twice's generic
// description, and returns the one to print.
func QueueWords(describe func(s Scenario, generic string) string) Option {
	return optionFunc(func(c *config) { c.queue.describe = describe })
}

// queueError records the first error of a queue hook; the check's report
// carries it as Err (a check whose queue bookkeeping failed proves nothing).
func (c *checker) queueError(what string, d Delivery, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.queueErr == nil {
		c.queueErr = fmt.Errorf("twice: the queue's %s for delivery %d of %s failed: %w", what, d.Number, d.JobID, err)
	}
}

// queueFetch runs the queue's fetch before a delivery; it returns why the
// queue would not deliver the job now ("" to deliver it).
func (c *checker) queueFetch(ctx context.Context, pool *pgxpool.Pool, jobID string, number int) string {
	if c.cfg.queue.fetch == nil {
		return ""
	}
	d := Delivery{JobID: jobID, Number: number, Pool: pool}
	skip, err := c.cfg.queue.fetch(ctx, c.db.Pool(), d)
	if err != nil {
		c.queueError("fetch", d, err)
		return ""
	}
	return skip
}

// afterAttempt plays the queue's side of an attempt that returned or
// crashed: it asks whether the ack committed with the job's transaction,
// then (unless the ack was lost or the attempt crashed) settles the job.
func (c *checker) afterAttempt(ctx context.Context, rec *AttemptRecord, ackLost bool) {
	q := c.cfg.queue
	if rec.Panic != "" || rec.Hung || rec.NotDelivered {
		return
	}
	d := Delivery{JobID: rec.JobID, Number: rec.Number, Err: rec.Err}
	if !rec.Crashed && rec.Err != nil && q.terminal != nil && q.terminal(rec.Err) {
		rec.Terminal = true
	}
	if q.acked != nil {
		ok, err := q.acked(ctx, c.db.Pool(), d)
		if err != nil {
			c.queueError("ack check", d, err)
		}
		rec.Acked = ok
	}
	switch {
	case rec.Acked && (rec.Crashed || ackLost || rec.Err != nil):
		rec.Note = "its ack had committed in its own transaction: the queue will not deliver it again"
	case rec.Terminal:
		rec.Note = "the error ends the job: the queue will not deliver it again"
	case !rec.Crashed && rec.Err != nil && q.snooze != nil && q.snooze(rec.Err):
		rec.Note = "snoozed: the queue delivers it again later"
	}
	if rec.Crashed || ackLost || q.settle == nil {
		return
	}
	if err := q.settle(ctx, c.db.Pool(), d); err != nil {
		c.queueError("settle", d, err)
	}
}

// deliveryOutcome is what the queue does after an attempt.
type deliveryOutcome int

const (
	outcomeDone      deliveryOutcome = iota // acknowledged, ended, or not delivered
	outcomeRedeliver                        // crashed or failed: deliver again
	outcomeLater                            // snoozed: deliver again, not counted
)

// outcome says what the queue does after rec (panics and hangs are
// handled before).
func (c *checker) outcome(rec AttemptRecord) deliveryOutcome {
	switch {
	case rec.NotDelivered, rec.Acked, rec.Terminal:
		return outcomeDone
	case rec.Crashed:
		return outcomeRedeliver
	case rec.Err != nil && c.cfg.queue.snooze != nil && c.cfg.queue.snooze(rec.Err):
		return outcomeLater
	case rec.Err != nil:
		return outcomeRedeliver
	}
	return outcomeDone
}

// deliverLosingAck is the sequential scenario's first delivery: the attempt
// succeeds but the queue's ack is lost. It reports whether the queue
// delivers the job again: not when the ack had committed with the job's
// transaction.
func (c *checker) deliverLosingAck(ctx context.Context, sr *ScenarioRun, jobID string) bool {
	ok := c.deliver(ctx, sr, jobID, delivery{loseAck: true})
	if !ok || len(sr.Attempts) == 0 {
		return false
	}
	last := sr.Attempts[len(sr.Attempts)-1]
	return !last.Acked
}

// finishQueue puts a queue hook's error on the report. (The queue's words
// reach the headlines through headline.)
func (c *checker) finishQueue(rep *Report) {
	if c.queueErr != nil && rep.Err == nil {
		rep.Err, rep.Findings = c.queueErr, nil
	}
}
