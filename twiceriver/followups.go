package twiceriver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/twicekit/twicekit/twice"
)

// Follow-ups (Job.Workers): the jobs the worker enqueues are worked by
// River itself. For each delivery of a follow-up the check starts a real
// river.Client on its own pool with the application's Workers, makes the
// follow-up the one job River may fetch (available now: its ScheduledAt is
// the check's clock, fast-forwarded, never slept), waits for River's event
// for it, and stops the client. River's executor, completer and retry
// policy work it; the worker, built on the attempt's handles, runs its
// statements and effects as points of the follow-up's attempt.

// workedMarker is the metadata key of the follow-ups the check worked to
// completion: like the job under check they are River's bookkeeping, left
// out of the comparison (a completed job is gone from the queue's work).
const workedMarker = "twicekit_worked_follow_up"

// followUpWait bounds how long one delivery of a follow-up waits for
// River's event; the attempt's own timeout (twice.AttemptTimeout) is
// shorter by default.
const followUpWait = time.Minute

// pending lists the jobs waiting in river_job besides the job under check,
// in the order River works them when they are due: by their delay from
// insert to ScheduledAt (whole seconds), then priority, then id.
func (q *queue[T]) pending(ctx context.Context, db *pgxpool.Pool) ([]twice.FollowUp, error) {
	st := q.check(db)
	rows, err := db.Query(ctx, `
SELECT id, kind, queue, greatest(0, round(extract(epoch FROM scheduled_at - created_at)))::bigint
FROM river_job
WHERE NOT metadata ? $1 AND NOT metadata ? $2 AND state IN ('available', 'scheduled', 'retryable', 'pending')
ORDER BY 4, priority, id`, marker, workedMarker)
	if err != nil {
		return nil, fmt.Errorf("listing the follow-up jobs: %w", err)
	}
	type row struct {
		id          int64
		kind, queue string
		after       int64
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		return x, r.Scan(&x.id, &x.kind, &x.queue, &x.after)
	})
	if err != nil {
		return nil, fmt.Errorf("listing the follow-up jobs: %w", err)
	}
	known := q.registered()
	var out []twice.FollowUp
	for _, r := range found {
		f := twice.FollowUp{Key: strconv.FormatInt(r.id, 10), Kind: r.kind, After: time.Duration(r.after) * time.Second}
		if known(r.kind) {
			f.Run = q.workFollowUp(st, r.id, r.queue)
		}
		out = append(out, f)
	}
	return out, nil
}

// registered tells the kinds the application's Workers registered. River
// has no lookup by kind: registering a probe for the kind on a bundle of
// its own (the Workers function called once more) panics exactly when the
// kind has a worker. A Workers function that cannot build its bundle
// without a real attempt counts every kind as registered (River's
// executor then fails a kind it does not know, as in production).
func (q *queue[T]) registered() func(kind string) bool {
	return func(kind string) (known bool) {
		defer func() {
			if recover() != nil {
				known = true
			}
		}()
		ws := q.job.Workers(&twice.Attempt{})
		if ws == nil {
			return false
		}
		river.AddWorkerArgs(ws, probeArgs{kind: kind}, river.WorkFunc(func(context.Context, *river.Job[probeArgs]) error { return nil }))
		return false
	}
}

// probeArgs are args of any kind, for registered.
type probeArgs struct{ kind string }

func (p probeArgs) Kind() string { return p.kind }

// workFollowUp is one delivery of the follow-up whose river_job id is id,
// worked by a real River client.
func (q *queue[T]) workFollowUp(st *checkState, id int64, queueName string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		ctl := context.WithoutCancel(ctx)
		cfg := *withInsertNote(q.cfg)
		cfg.Workers = q.job.Workers(a)
		cfg.Queues = map[string]river.QueueConfig{queueName: {MaxWorkers: 1}}
		// No LISTEN connection; River's maintenance services keep their
		// staggered start, which outlasts a client that lives for one
		// follow-up: no rescuer or scheduler touches the other rows.
		cfg.PollOnly = true
		cfg.FetchPollInterval = 5 * time.Millisecond
		cfg.FetchCooldown = time.Millisecond
		client, err := river.NewClient(riverpgxv5.New(st.control), &cfg)
		if err != nil {
			return fmt.Errorf("twiceriver: River's client for the follow-up: %w", err)
		}
		events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed,
			river.EventKindJobCancelled, river.EventKindJobSnoozed)
		defer cancel()
		held, err := makeTheOnlyAvailable(ctl, st.control, id, queueName)
		if err != nil {
			return err
		}
		defer func() { _ = release(ctl, st.control, held) }()
		var hadQueue bool
		if err := st.control.QueryRow(ctl, `SELECT EXISTS (SELECT FROM river_queue WHERE name = $1)`, queueName).Scan(&hadQueue); err != nil {
			return fmt.Errorf("twiceriver: reading River's queues: %w", err)
		}
		if !hadQueue { // River's client records its queue: the check's client is no client of the application's
			defer func() { _, _ = st.control.Exec(ctl, `DELETE FROM river_queue WHERE name = $1`, queueName) }()
		}
		if err := client.Start(ctx); err != nil {
			return fmt.Errorf("twiceriver: starting River's client for the follow-up: %w", err)
		}
		defer func() {
			stop, done := context.WithTimeout(ctl, 10*time.Second)
			defer done()
			_ = client.Stop(stop)
		}()
		timer := time.NewTimer(followUpWait)
		defer timer.Stop()
		for snoozes := 0; ; {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-timer.C:
				return fmt.Errorf("twiceriver: River did not work the follow-up %d within %s", id, followUpWait)
			case ev := <-events:
				if ev == nil || ev.Job == nil || ev.Job.ID != id {
					continue
				}
				switch ev.Kind {
				case river.EventKindJobCompleted:
					return nil
				case river.EventKindJobCancelled:
					return rivertype.JobCancel(lastError(ev.Job))
				case river.EventKindJobSnoozed:
					if snoozes++; snoozes >= maxSnoozes {
						return &SnoozedForeverError{Snoozes: snoozes}
					}
					if _, err := makeTheOnlyAvailable(ctl, st.control, id, queueName); err != nil {
						return err
					}
					continue
				}
				return lastError(ev.Job)
			}
		}
	}
}

// lastError is the error River recorded for the job's last attempt.
func lastError(row *rivertype.JobRow) error {
	if n := len(row.Errors); n > 0 {
		return errors.New(row.Errors[n-1].Error)
	}
	return errors.New("River failed the job without an error")
}

// makeTheOnlyAvailable makes the follow-up available now and holds back
// the other jobs of its queue that River could fetch first (their
// ScheduledAt moved a century on), returning them to release.
func makeTheOnlyAvailable(ctx context.Context, db *pgxpool.Pool, id int64, queueName string) ([]int64, error) {
	if _, err := db.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = now() WHERE id = $1 AND state IN ('available', 'scheduled', 'retryable')`, id); err != nil {
		return nil, fmt.Errorf("twiceriver: making the follow-up available: %w", err)
	}
	rows, err := db.Query(ctx, `UPDATE river_job SET scheduled_at = scheduled_at + interval '100 years' WHERE queue = $1 AND state = 'available' AND id <> $2 RETURNING id`, queueName, id)
	if err != nil {
		return nil, fmt.Errorf("twiceriver: holding back the queue's other jobs: %w", err)
	}
	held, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("twiceriver: holding back the queue's other jobs: %w", err)
	}
	return held, nil
}

// release gives the held-back jobs their ScheduledAt back.
func release(ctx context.Context, db *pgxpool.Pool, held []int64) error {
	if len(held) == 0 {
		return nil
	}
	_, err := db.Exec(ctx, `UPDATE river_job SET scheduled_at = scheduled_at - interval '100 years' WHERE id = ANY($1)`, held)
	return err
}

// fetchFollowUp is River's producer for a follow-up: the job is River's
// client's to fetch (workFollowUp); a finalized one is not run again.
func (q *queue[T]) fetchFollowUp(ctx context.Context, db *pgxpool.Pool, st *checkState, d twice.Delivery) (string, error) {
	id, err := strconv.ParseInt(d.FollowUp, 10, 64)
	if err != nil {
		return "", fmt.Errorf("twiceriver: internal error: follow-up key %q", d.FollowUp)
	}
	q.mu.Lock()
	st.ids[d.JobID] = id
	q.mu.Unlock()
	var state string
	if err := db.QueryRow(ctx, `SELECT state FROM river_job WHERE id = $1`, id).Scan(&state); err != nil {
		return "", err
	}
	switch rivertype.JobState(state) {
	case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
		return "River does not run a job that is " + state, nil
	}
	return "", nil
}

// settleFollowUp marks a follow-up River completed as the check's work.
func (q *queue[T]) settleFollowUp(ctx context.Context, db *pgxpool.Pool, st *checkState, d twice.Delivery) error {
	q.mu.Lock()
	id := st.ids[d.JobID]
	q.mu.Unlock()
	_, err := db.Exec(ctx, `UPDATE river_job SET metadata = metadata || jsonb_build_object($2::text, true) WHERE id = $1 AND state = 'completed'`,
		id, workedMarker)
	return err
}
