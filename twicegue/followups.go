package twicegue

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"

	"github.com/twicekit/twicekit/twice"
)

// Follow-ups (Job.WorkFollowUps): the jobs the work function enqueues are
// worked by gue's worker code as the job under check is (locked by their
// ID, worked with the WorkMap's function for their type, deleted in their
// transaction). A worked job is gone from gue_jobs, as gue leaves it.

// pending lists the jobs in gue_jobs besides the job under check, in the
// order gue's workers take them when they are due: by their delay from
// enqueue to RunAt (whole seconds), then priority, then type and args (a
// job ID is random).
func (q *queue) pending(ctx context.Context, db *pgxpool.Pool) ([]twice.FollowUp, error) {
	j := q.job.Job
	rows, err := db.Query(ctx, `
SELECT job_id, job_type, greatest(0, round(extract(epoch FROM run_at - created_at)))::bigint
FROM gue_jobs
WHERE NOT (job_type = $1 AND args = $2 AND queue = $3)
ORDER BY 3, priority, job_type, args, job_id`, j.Type, j.Args, j.Queue)
	if err != nil {
		return nil, fmt.Errorf("listing the follow-up jobs: %w", err)
	}
	type row struct {
		id, kind string
		after    int64
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		return x, r.Scan(&x.id, &x.kind, &x.after)
	})
	if err != nil {
		return nil, fmt.Errorf("listing the follow-up jobs: %w", err)
	}
	var out []twice.FollowUp
	for _, r := range found {
		id, err := ulid.Parse(r.id)
		if err != nil {
			return nil, fmt.Errorf("the follow-up's job_id %q: %w", r.id, err)
		}
		f := twice.FollowUp{Key: r.id, Kind: r.kind, After: time.Duration(r.after) * time.Second}
		if q.registered(r.kind) {
			f.Run = q.workFollowUp(r.kind, id)
		}
		out = append(out, f)
	}
	return out, nil
}

// registered tells whether WorkMap has a work function for kind. A
// WorkMap function that cannot build its map without a real attempt
// counts every kind as registered.
func (q *queue) registered(kind string) (known bool) {
	defer func() {
		if recover() != nil {
			known = true
		}
	}()
	return q.job.WorkMap(&twice.Attempt{})[kind] != nil
}

// workFollowUp is one delivery of the follow-up: gue's worker with the
// WorkMap's function for its type.
func (q *queue) workFollowUp(kind string, id ulid.ULID) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		wf := q.job.WorkMap(a)[kind]
		if wf == nil {
			return fmt.Errorf("twicegue: the WorkMap has no work function for the follow-up's type %q", kind)
		}
		return q.workByID(ctx, a, wf, id)
	}
}

// fetchFollowUp is the producer's side of a follow-up's delivery: the job
// is in gue_jobs already; a redelivery waits until a crashed attempt's
// lock is gone, as for the job under check.
func (q *queue) fetchFollowUp(ctx context.Context, db *pgxpool.Pool, st *checkState, d twice.Delivery) (string, error) {
	id, err := ulid.Parse(d.FollowUp)
	if err != nil {
		return "", fmt.Errorf("twicegue: internal error: follow-up key %q", d.FollowUp)
	}
	q.mu.Lock()
	st.ids[d.JobID] = id
	alone := st.running[d.JobID] == 0
	q.mu.Unlock()
	if d.Number > 1 && alone {
		return "", waitUnlocked(ctx, db, id)
	}
	return "", nil
}
