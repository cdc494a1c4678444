package queue

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A queue's delivery semantics, where they differ from the generic
// at-least-once queue's: which errors end a job, which mean "later", whether
// the ack commits in the job's own transaction, the queue's own rows and its
// words. A queue adapter (package twiceriver for River) sets them from the
// real library; any other queue uses the same options.

// Delivery is one delivery of a job as a queue's hooks see it: twice's
// Delivery, field for field (twice converts one to the other).
type Delivery struct {
	JobID    string
	Number   int
	Err      error
	Pool     *pgxpool.Pool
	FollowUp string
	Now      time.Time
}

// Hook is a hook of the queue, called on the check's own connection pool.
type Hook func(ctx context.Context, db *pgxpool.Pool, d Delivery) error

// Config is the queue's semantics, as its options set them (each nil
// when not given).
type Config struct {
	Terminal func(error) bool // TerminalError
	Snooze   func(error) bool // SnoozeError
	Acked    func(ctx context.Context, db *pgxpool.Pool, d Delivery) (bool, error)
	Fetch    func(ctx context.Context, db *pgxpool.Pool, d Delivery) (string, error)
	Settle   Hook
	Label    func(label string) string // QueueLabels
}

// Failed records the first error of a queue hook (what: "fetch",
// "ack check", "settle", "follow-up listing").
type Failed func(what string, d Delivery, err error)

// HookError is the check's error for a queue hook's: a check whose queue
// bookkeeping failed proves nothing.
func HookError(what string, d Delivery, err error) error {
	return fmt.Errorf("twice: the queue's %s for delivery %d of %s failed: %w", what, d.Number, d.JobID, err)
}

// BeforeDelivery runs the queue's fetch before delivery d; it returns why
// the queue would not deliver the job now ("" to deliver it). d is asked
// for only when the queue has a fetch.
func (q Config) BeforeDelivery(ctx context.Context, db *pgxpool.Pool, d func() Delivery, failed Failed) string {
	if q.Fetch == nil {
		return ""
	}
	del := d()
	skip, err := q.Fetch(ctx, db, del)
	if err != nil {
		failed("fetch", del, err)
		return ""
	}
	return skip
}

// AfterAttempt plays the queue's side of an attempt that returned or
// crashed: it asks whether the ack committed with the job's transaction,
// then (unless the ack was lost or the attempt crashed) settles the job.
// It sets a's Terminal, Acked and Note. d is asked for only when the
// attempt ran (no panic, no hang, delivered).
func (q Config) AfterAttempt(ctx context.Context, db *pgxpool.Pool, a *Attempt, d func() Delivery, ackLost bool, failed Failed) {
	if a.Panic != "" || a.Hung || a.NotDelivered {
		return
	}
	del := d()
	if !a.Crashed && a.Err != nil && q.Terminal != nil && q.Terminal(a.Err) {
		a.Terminal = true
	}
	if q.Acked != nil {
		ok, err := q.Acked(ctx, db, del)
		if err != nil {
			failed("ack check", del, err)
		}
		a.Acked = ok
	}
	switch {
	case a.Acked && (a.Crashed || ackLost || a.Err != nil):
		a.Note = "its ack had committed in its own transaction: the queue will not deliver it again"
	case a.Terminal:
		a.Note = "the error ends the job: the queue will not deliver it again"
	case !a.Crashed && a.Err != nil && q.Snooze != nil && q.Snooze(a.Err):
		a.Note = "snoozed: the queue delivers it again later"
	}
	if a.Crashed || ackLost || q.Settle == nil {
		return
	}
	if err := q.Settle(ctx, db, del); err != nil {
		failed("settle", del, err)
	}
}

// Outcome is what the queue does after an attempt.
type Outcome int

const (
	Done      Outcome = iota // acknowledged, ended, or not delivered
	Redeliver                // crashed or failed: deliver again
	Later                    // snoozed: deliver again, not counted
)

// Outcome says what the queue does after a (panics and hangs are handled
// before).
func (q Config) Outcome(a Attempt) Outcome {
	switch {
	case a.NotDelivered, a.Acked, a.Terminal:
		return Done
	case a.Crashed && !a.CrashedAfterAck: // after the ack, the queue has had the outcome
		return Redeliver
	case a.Err != nil && q.Snooze != nil && q.Snooze(a.Err):
		return Later
	case a.Err != nil:
		return Redeliver
	}
	return Done
}

// Snoozed reports whether a returned an error that asks the queue to
// deliver the job again later (SnoozeError).
func (q Config) Snoozed(a Attempt) bool {
	return !a.Crashed && a.Err != nil && q.Snooze != nil && q.Snooze(a.Err)
}

// Happened is what the queue did in one scenario, as the timeline shows
// it: twice's Happened, field for field.
type Happened struct {
	AckCommitted bool
	Ended        bool
	NotDelivered string
	Redelivered  bool
}

// HappenedOf reads what the queue did from the scenario's attempts of job
// (the checked job); ackLost says the scenario lost an ack.
func HappenedOf(attempts []Attempt, job string, ackLost bool) Happened {
	var h Happened
	for _, a := range attempts {
		if a.JobID != job {
			continue
		}
		if a.Acked && (a.Crashed || a.Err != nil || ackLost) {
			h.AckCommitted = true
		}
		if a.Terminal {
			h.Ended = true
		}
		if a.NotDelivered && h.NotDelivered == "" {
			h.NotDelivered = a.Note
		}
		if a.Number > 1 && !a.NotDelivered {
			h.Redelivered = true
		}
	}
	return h
}

// Said is the scenario part of a finding's headline: generic, twice's
// description of the scenario, said as the timeline shows it (no
// redelivery where the scenario's attempts of job show none), in the
// queue's own words when QueueWords gave them (words is nil otherwise),
// with the next scheduled run and the follow-ups it worked.
func Said(generic string, attempts []Attempt, job string, ackLost bool, words func(Happened, string) string, worked Worked) string {
	said := generic
	if h := HappenedOf(attempts, job, ackLost); words == nil && !h.Redelivered && strings.HasSuffix(said, ", then redelivery") {
		// The headline says what the timeline shows: no redelivery.
		said = strings.TrimSuffix(said, ", then redelivery")
		switch {
		case h.AckCommitted:
			said += "; its ack had committed in its own transaction, so the queue did not deliver it again"
		case h.Ended:
			said += "; the error it returned ended the job, so the queue did not deliver it again"
		case h.NotDelivered != "":
			said += "; the queue did not deliver it again: " + h.NotDelivered
		default:
			said += "; the queue did not deliver it again (MaxDeliveries)"
		}
	}
	if words != nil {
		said = words(HappenedOf(attempts, job, ackLost), said)
	}
	if HasNextRun(attempts) {
		if !HappenedOf(attempts, job, ackLost).Redelivered {
			said = strings.TrimSuffix(said, ", then redelivery")
		}
		said += ", then the next scheduled run (Periodic)"
	}
	said += worked.Headline() // followups.go
	return said
}
