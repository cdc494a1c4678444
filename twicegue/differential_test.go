package twicegue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/vgarvardt/gue/v5"
	"github.com/vgarvardt/gue/v5/adapter"
	"github.com/vgarvardt/gue/v5/adapter/pgxv5"

	"github.com/twicekit/twicekit/internal/docsblock"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The differential suite: each case works the same job with the model's
// delivery (the queue's fetch and run, delivered again while gue keeps the
// job, as twice's queue does) and with gue's own Worker on the test's
// PostgreSQL, and compares the deliveries (the error count each saw), the
// rows, and whether gue still holds the job.

type gueCase struct {
	name    string
	order   int64
	backoff gue.Backoff
	work    func(pool *pgxpool.Pool) gue.WorkFunc
	// followUp is the WorkMap's function for the follow-up (bonusType)
	// the work enqueues: gue's worker works it (made due at once, as the
	// check's clock moves); the model works it with Job.WorkFollowUps.
	followUp func(pool *pgxpool.Pool) gue.WorkFunc
	// duplicates: the producer enqueued the job twice and two gue Workers
	// work both copies at once (both inside the work function together);
	// the model's side is every state its duplicate-overlap scenarios
	// reach (twice.ConcurrentDuplicates).
	duplicates bool
}

var gueCases = []gueCase{
	{name: "work in j.Tx(), done", order: 9812, work: func(*pgxpool.Pool) gue.WorkFunc { return rewardOncePerOrder }},
	{name: "ErrDiscardJob deletes the job", order: 9813, work: func(*pgxpool.Pool) gue.WorkFunc { return rewardInTx }},
	{name: "errors retried, their j.Tx() work committed with the error", order: 9812, backoff: gue.NewConstantBackoff(0),
		work: func(*pgxpool.Pool) gue.WorkFunc { return failUntil(2, rewardInTx) }},
	{name: "BackoffNever discards on the first error", order: 9812, backoff: gue.BackoffNever,
		work: func(*pgxpool.Pool) gue.WorkFunc { return failUntil(2, rewardInTx) }},
	{name: "ErrRescheduleJobIn: worked again, error count + 1", order: 9812,
		work: func(*pgxpool.Pool) gue.WorkFunc { return rescheduleOnce(rewardOncePerOrder) }},
	{name: "connection lost before gue's commit: j.Tx() rolled back, pool work kept", order: 9812,
		work: func(p *pgxpool.Pool) gue.WorkFunc { return loseConnectionOnce(p, rewardOnPool(p)) }},
	{name: "a follow-up enqueued in j.Tx() 30 s later, worked with the WorkMap", order: 9812,
		work: rewardThenBonus, followUp: func(*pgxpool.Pool) gue.WorkFunc { return bonusInTx }},
	{name: "two copies at once, keyed on the order in j.Tx()", order: 9812, duplicates: true,
		work: func(*pgxpool.Pool) gue.WorkFunc { return rewardOncePerOrder }},
	{name: "two copies at once, unkeyed in j.Tx()", order: 9812, duplicates: true,
		work: func(*pgxpool.Pool) gue.WorkFunc { return rewardInTx }},
	{name: "two copies at once, check then act on the points in j.Tx()", order: 9812, duplicates: true,
		work: func(*pgxpool.Pool) gue.WorkFunc { return rewardIfNoPoints }},
}

// failUntil fails (after its work in j.Tx()) until gue's error count
// reaches n.
func failUntil(n int32, wf gue.WorkFunc) gue.WorkFunc {
	return func(ctx context.Context, j *gue.Job) error {
		if err := wf(ctx, j); err != nil {
			return err
		}
		if j.ErrorCount < n {
			return fmt.Errorf("provider unavailable (error count %d)", j.ErrorCount)
		}
		return nil
	}
}

// rescheduleOnce asks gue to run the job again right away, the first time.
func rescheduleOnce(wf gue.WorkFunc) gue.WorkFunc {
	return func(ctx context.Context, j *gue.Job) error {
		if j.ErrorCount == 0 {
			return gue.ErrRescheduleJobIn(0, "not yet")
		}
		return wf(ctx, j)
	}
}

// loseConnectionOnce runs wf, then, the first time only, has PostgreSQL
// end the connection that holds the job's transaction, as when a worker
// dies before gue's commit.
func loseConnectionOnce(pool *pgxpool.Pool, wf gue.WorkFunc) gue.WorkFunc {
	return func(ctx context.Context, j *gue.Job) error {
		if err := wf(ctx, j); err != nil {
			return err
		}
		tag, err := pool.Exec(ctx, `INSERT INTO connection_lost VALUES (1) ON CONFLICT DO NOTHING`)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = j.Tx().Exec(ctx, `SELECT pg_terminate_backend(pg_backend_pid())`)
		return err
	}
}

var diffSchema = pgfixture.Migrations(Migrations(), schema, pgfixture.SQL(`CREATE TABLE connection_lost (id int PRIMARY KEY);`))

func TestModelAgreesWithGue(t *testing.T) {
	t.Parallel()
	engines := make([]string, len(gueCases))
	ran := 0
	for i, c := range gueCases {
		t.Run(c.name, func(t *testing.T) {
			ran++
			model := runModel(t, c)
			engines[i] = runGue(t, c)
			if model != engines[i] {
				t.Errorf("the model and gue disagree on %q:\nmodel:\n%s\ngue:\n%s", c.name, model, engines[i])
			}
		})
	}
	// A -run that picked some cases cannot judge the whole table.
	if !t.Failed() && ran == len(gueCases) {
		docsblock.Check(t, "../docs/queues.md", "twicegue:observed", observedTable(gueCases, engines))
	}
}

func newDB(t *testing.T) *pgfixture.DB {
	db := pgfixture.New(t, diffSchema)
	if err := pgx.BeginFunc(t.Context(), db.Pool(), func(tx pgx.Tx) error { return seed(t.Context(), tx) }); err != nil {
		t.Fatal(err)
	}
	return db
}

func (c gueCase) job() Job {
	return Job{Schema: schema, Seed: seed, Job: &gue.Job{Type: rewardType, Args: args(c.order)}, Backoff: c.backoff,
		WorkFollowUps: c.followUp != nil, WorkMap: func(a *twice.Attempt) gue.WorkMap { return c.workMap(a.Pool, nil) }}
}

// workMap is the case's work functions on pool, each logged; enter, when
// set, runs first in the job's (not the follow-up's).
func (c gueCase) workMap(pool *pgxpool.Pool, enter func(context.Context) error) gue.WorkMap {
	wf := logged(c.work(pool))
	if enter != nil {
		inner := wf
		wf = func(ctx context.Context, j *gue.Job) error {
			if err := enter(ctx); err != nil {
				return err
			}
			return inner(ctx, j)
		}
	}
	wm := gue.WorkMap{rewardType: wf}
	if c.followUp != nil {
		wm[bonusType] = logged(c.followUp(pool))
	}
	return wm
}

// runModel delivers the job as twice's queue does: again after an error or
// a lost connection, while gue keeps it. A case with a follow-up or
// duplicates is played by the check itself (differential_more_test.go).
func runModel(t *testing.T, c gueCase) string {
	switch {
	case c.followUp != nil:
		return modelFollowUps(t, c)
	case c.duplicates:
		return modelDuplicates(t, c)
	}
	ctx := t.Context()
	db := newDB(t)
	q := newQueue(c.job())
	for n := 1; ; n++ {
		if n > 10 {
			t.Fatal("the model delivered the job 10 times")
		}
		d := twice.Delivery{JobID: "job-1", Number: n, Pool: db.Pool()}
		if _, err := q.fetch(ctx, db.Pool(), d); err != nil {
			t.Fatal(err)
		}
		err := q.run(ctx, &twice.Attempt{JobID: "job-1", Number: n, Pool: db.Pool()})
		acked, aerr := q.acked(ctx, db.Pool(), d)
		if aerr != nil {
			t.Fatal(aerr)
		}
		if err == nil || acked || isDiscarded(err) {
			break
		}
	}
	return outcomeOf(t, db)
}

// runGue works the job with gue's own client and Worker; two copies of
// it with two Workers at once, under each of the schedules (the distinct
// states they reach, one after another).
func runGue(t *testing.T, c gueCase) string {
	if !c.duplicates {
		return runGueOnce(t, c, nil)
	}
	states := map[string]bool{}
	for _, s := range schedules() {
		states[runGueOnce(t, c, s(t))] = true
	}
	return joinStates(states)
}

// runGueOnce works the job (two copies when c.duplicates, under s) with
// gue's own client and Workers.
func runGueOnce(t *testing.T, c gueCase, s *schedule) string {
	ctx, cancel := context.WithCancel(t.Context())
	db := newDB(t)
	opts := []gue.ClientOption{gue.WithClientLogger(adapter.NoOpLogger{})}
	if c.backoff != nil {
		opts = append(opts, gue.WithClientBackoff(c.backoff))
	}
	client, err := gue.NewClient(pgxv5.NewConnPool(db.Pool()), opts...)
	if err != nil {
		t.Fatal(err)
	}
	copies, enter := 1, func(context.Context) error { return nil }
	if c.duplicates {
		copies, enter = 2, bothInside(t, 2)
		ctx = context.WithValue(ctx, scheduleKey{}, s)
	}
	for range copies {
		if err := client.Enqueue(ctx, &gue.Job{Type: rewardType, Args: args(c.order)}); err != nil {
			t.Fatal(err)
		}
	}
	wm := c.workMap(db.Pool(), enter)
	done := make(chan error, copies)
	for range copies {
		w, err := gue.NewWorker(client, wm, gue.WithWorkerPollInterval(5*time.Millisecond), gue.WithWorkerLogger(adapter.NoOpLogger{}))
		if err != nil {
			t.Fatal(err)
		}
		go func() { done <- w.Run(ctx) }()
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var left int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM gue_jobs`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("gue's workers did not finish the jobs within 20s")
		}
		if c.followUp != nil {
			// The check's clock moves to the follow-up's RunAt; here the
			// follow-up is made due at once, never slept for.
			if _, err := db.Pool().Exec(ctx, `UPDATE gue_jobs SET run_at = now() WHERE job_type = $1 AND run_at > now()`, bonusType); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	for range copies {
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	}
	return outcomeOf(t, db)
}

// outcomeOf prints the deliveries (by error count; gue's job IDs differ)
// and the rows.
func outcomeOf(t *testing.T, db *pgfixture.DB) string {
	snap, err := db.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return linesOf(snap)
}

// ignored are the columns outcomes leave out: IDs and times the two sides
// cannot share (gue's job IDs are random; the model numbers its own), and
// the deliveries' serial.
var ignored = map[string]bool{"deliveries.n": true, "deliveries.job_id": true,
	"gue_jobs.job_id": true, "gue_jobs.run_at": true, "gue_jobs.created_at": true, "gue_jobs.updated_at": true}

// linesOf prints a snapshot's rows, one a line, sorted, without the
// ignored columns.
func linesOf(snap *pgfixture.Snapshot) string {
	var lines []string
	for _, table := range snap.Tables() {
		for _, r := range snap.Rows(table) {
			var kept pgfixture.Row
			for i, col := range r.Columns {
				if !ignored[table+"."+col] && i < len(r.Values) {
					kept.Columns = append(kept.Columns, col)
					kept.Values = append(kept.Values, r.Values[i])
				}
			}
			lines = append(lines, table+kept.String())
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
