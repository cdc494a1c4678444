package twiceriver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The differential suite's harness: one worker behaviour played (a) by a
// real, started river.Client on its own database and (b) by the check's
// model of River (queue.fetch, run, settle) on another, and what each
// left after every delivery.

// diffSchema is the application's tables: one row per delivery (what the
// worker saw) and the credits its work gives.
var diffSchema = pgfixture.Migrations(Migrations(), appSchema)

// appSchema is diffSchema without River's tables (a Job's Schema).
var appSchema = pgfixture.SQL(`
CREATE TABLE deliveries (n serial PRIMARY KEY, attempt int NOT NULL, snoozes int NOT NULL);
CREATE TABLE credits (order_id bigint PRIMARY KEY, amount int NOT NULL);`)

// DiffArgs is the job of every behaviour; the follow-ups go to a queue no
// client works.
type DiffArgs struct {
	OrderID int64 `json:"order_id"`
}

func (DiffArgs) Kind() string { return "differential" }

// FollowUpArgs is the follow-up job a behaviour inserts.
type FollowUpArgs struct {
	OrderID int64 `json:"order_id"`
}

func (FollowUpArgs) Kind() string { return "follow_up" }

const followUps = "follow_ups"

// WitnessArgs is a second stuck job, with a timeout: River's rescuer runs
// it again, which shows the rescuer has run.
type WitnessArgs struct{}

func (WitnessArgs) Kind() string { return "rescue_witness" }

// behaviour is one row of the suite's table.
type behaviour struct {
	name string
	// checkDoes is what the check concludes from such a worker (the docs'
	// table); River's column is what the suite saw River do.
	checkDoes string
	work      func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error
	timeout   time.Duration // the worker's Timeout
	opts      *river.InsertOpts
	// insertTwice inserts the job twice (a unique job: River skips the
	// second).
	insertTwice bool
	// stuck: the job is found running, its worker dead (River's rescuer).
	stuck bool
	// config adds to the client's config on both sides.
	config func(*river.Config)
	// workFollowUps: the worker schedules a follow-up (FollowUpArgs, in the
	// default queue, 30 s later) that the application's Workers work: on
	// River's side the harness makes it due at once, as the check does; on
	// the model's, the check's follow-up work (Job.Workers) runs it.
	workFollowUps bool
}

// followUpWorker gives the follow-up's own credit (the order's ID plus
// 1000).
type followUpWorker struct {
	river.WorkerDefaults[FollowUpArgs]
	pool *pgxpool.Pool
}

func (w *followUpWorker) Work(ctx context.Context, job *river.Job[FollowUpArgs]) error {
	return credit(ctx, w.pool, job.Args.OrderID+1000)
}

// diffWorker records each delivery, then does what the behaviour says.
type diffWorker struct {
	river.WorkerDefaults[DiffArgs]
	pool *pgxpool.Pool
	b    behaviour
	gate func(ctx context.Context) // River's side: wait for the harness
}

func (w *diffWorker) Work(ctx context.Context, job *river.Job[DiffArgs]) error {
	if w.gate != nil {
		w.gate(ctx)
	}
	if _, err := w.pool.Exec(context.WithoutCancel(ctx), `INSERT INTO deliveries (attempt, snoozes) VALUES ($1, $2)`,
		job.Attempt, snoozesOf(job.Metadata)); err != nil {
		return err
	}
	return w.b.work(ctx, w.pool, job)
}

func (w *diffWorker) Timeout(*river.Job[DiffArgs]) time.Duration { return w.b.timeout }

// diffConfig is the client's config on both sides: retries at once (River's
// default waits attempt⁴ seconds), a short rescue.
func diffConfig() *river.Config {
	return &river.Config{
		RetryPolicy:          retryNow{},
		JobTimeout:           2 * time.Second,
		RescueStuckJobsAfter: 2 * time.Second,
	}
}

type retryNow struct{}

func (retryNow) NextRetry(*rivertype.JobRow) time.Time { return time.Now().UTC() }

// seen is what one side left after one delivery.
type seen struct {
	Row        string // the job's river_job row
	Deliveries string // the deliveries table
	Credits    string
	FollowUps  string
}

func (s seen) String() string {
	return fmt.Sprintf("row %s; deliveries %s; credits %s; follow-ups %s", s.Row, s.Deliveries, s.Credits, s.FollowUps)
}

// rowText is what the suite compares of a river_job row.
func rowText(r *rivertype.JobRow) string {
	meta := map[string]any{}
	_ = json.Unmarshal(r.Metadata, &meta)
	delete(meta, marker)
	delete(meta, workedMarker)
	m, _ := json.Marshal(meta)
	var errs []string
	for _, e := range r.Errors {
		errs = append(errs, fmt.Sprintf("%d:%s", e.Attempt, e.Error))
	}
	later := r.ScheduledAt.After(time.Now().Add(time.Second))
	return fmt.Sprintf("state=%s attempt=%d metadata=%s errors=[%s] finalized=%t scheduled_later=%t",
		r.State, r.Attempt, m, strings.Join(errs, "; "), r.FinalizedAt != nil, later)
}

// appRows reads the application's rows and the follow-up jobs.
func appRows(ctx context.Context, t *testing.T, pool *pgxpool.Pool) (deliveries, credits, follow string) {
	t.Helper()
	q := func(sql string) string {
		var s *string
		if err := pool.QueryRow(ctx, sql).Scan(&s); err != nil {
			t.Fatalf("reading the application's rows: %v", err)
		}
		if s == nil {
			return "none"
		}
		return *s
	}
	return q(`SELECT string_agg(format('(attempt %s, snoozes %s)', attempt, snoozes), ' ' ORDER BY n) FROM deliveries`),
		q(`SELECT string_agg(format('(%s, %s)', order_id, amount), ' ' ORDER BY order_id) FROM credits`),
		q(`SELECT string_agg(format('(%s %s %s %s unique=%s)', kind, args, queue, state, unique_key IS NOT NULL), ' ' ORDER BY id) FROM river_job WHERE kind NOT IN ('differential', 'rescue_witness')`)
}

func look(ctx context.Context, t *testing.T, pool *pgxpool.Pool, row *rivertype.JobRow) seen {
	t.Helper()
	d, c, f := appRows(ctx, t, pool)
	return seen{Row: rowText(row), Deliveries: d, Credits: c, FollowUps: f}
}

// newDiffDB is a database of diffSchema with room for a pool of its own.
func newDiffDB(ctx context.Context, t *testing.T) *pgxpool.Pool {
	t.Helper()
	srv, err := pgfixture.Shared(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db, release, err := srv.CreateDBReserving(ctx, diffSchema, 6, "the differential suite")
	if err != nil {
		t.Fatal(err)
	}
	// db.URL() masks the password: the pool takes the settings themselves.
	cfg, err := pgxpool.ParseConfig("")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig = db.ConnConfig()
	cfg.MaxConns = 6
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Close()
		release()
		_ = db.Close(context.Background(), false)
	})
	return pool
}

const deliveryWait = 30 * time.Second

// onRiver plays the behaviour on a real, started river.Client and returns
// what it left after every delivery: River's own row from its event
// (job_completed, job_failed, job_cancelled, job_snoozed), the
// application's rows read while the next delivery waits at its gate.
func onRiver(ctx context.Context, t *testing.T, b behaviour) []seen {
	t.Helper()
	pool := newDiffDB(ctx, t)
	gate := make(chan struct{}, 1)
	gate <- struct{}{}
	w := &diffWorker{pool: pool, b: b, gate: func(ctx context.Context) {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}}
	workers := river.NewWorkers()
	river.AddWorker[DiffArgs](workers, w)
	river.AddWorker[WitnessArgs](workers, river.WorkFunc(func(context.Context, *river.Job[WitnessArgs]) error { return nil }))
	if b.workFollowUps {
		river.AddWorker[FollowUpArgs](workers, &followUpWorker{pool: pool})
	}
	cfg := diffConfig()
	if b.config != nil {
		b.config(cfg)
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.FetchPollInterval = 20 * time.Millisecond
	cfg.FetchCooldown = 5 * time.Millisecond
	cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}
	cfg.Workers = workers
	cfg.SkipUnknownJobCheck = true // the follow-ups' workers run elsewhere
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed,
		river.EventKindJobCancelled, river.EventKindJobSnoozed)
	defer cancel()

	res, err := client.Insert(ctx, DiffArgs{OrderID: 1}, b.opts)
	if err != nil {
		t.Fatal(err)
	}
	if b.insertTwice {
		again, err := client.Insert(ctx, DiffArgs{OrderID: 1}, b.opts)
		if err != nil {
			t.Fatal(err)
		}
		if !again.UniqueSkippedAsDuplicate {
			t.Fatalf("River did not skip the second insert of a unique job")
		}
	}
	if b.stuck {
		// A witness with a timeout, stuck as long: once River ran it again,
		// River's rescuer has been over both.
		if _, err := client.Insert(ctx, WitnessArgs{}, nil); err != nil {
			t.Fatal(err)
		}
		// As River's producer leaves a job whose worker died.
		if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() - interval '1 hour'`); err != nil {
			t.Fatal(err)
		}
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stopCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer stop()
		if err := client.Stop(stopCtx); err != nil {
			t.Errorf("stopping River's client: %v", err)
		}
	}()
	var out []seen
	timer := time.NewTimer(deliveryWait)
	defer timer.Stop()
	for {
		select {
		case ev := <-events:
			if ev.Job.Kind == (WitnessArgs{}).Kind() && b.stuck && b.timeout < 0 {
				row, err := riverpgxv5.New(pool).GetExecutor().JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: res.Job.ID})
				if err != nil {
					t.Fatal(err)
				}
				return append(out, look(ctx, t, pool, row))
			}
			if ev.Job.Kind == (FollowUpArgs{}).Kind() && b.workFollowUps {
				return append(out, look(ctx, t, pool, ev.Job))
			}
			if ev.Job.Kind != (DiffArgs{}).Kind() {
				continue
			}
			out = append(out, look(ctx, t, pool, ev.Job))
			if ev.Job.FinalizedAt != nil && b.workFollowUps {
				// Due now, as the check makes it (never waiting its 30 s).
				if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = now() WHERE kind = $1`, (FollowUpArgs{}).Kind()); err != nil {
					t.Fatal(err)
				}
				timer.Reset(deliveryWait)
				continue
			}
			if ev.Job.FinalizedAt != nil {
				return out
			}
			gate <- struct{}{}
			timer.Reset(deliveryWait)
		case <-timer.C:
			t.Fatalf("River delivered nothing for %s after %d deliveries: %v", deliveryWait, len(out), out)
		}
	}
}

// onModel plays the behaviour through the check's model of River: its
// producer (fetch), its executor (run, snoozes inside), its completer
// (settle), with twice's rule of what comes next (a nil error or the job's
// completion ends it, JobCancel ends it, any other error delivers it
// again), which must agree with the row River's model left.
func onModel(ctx context.Context, t *testing.T, b behaviour) []seen {
	t.Helper()
	pool := newDiffDB(ctx, t)
	var out []seen
	cfg := diffConfig()
	if b.config != nil {
		b.config(cfg)
	}
	job := Job[DiffArgs]{Args: DiffArgs{OrderID: 1}, InsertOpts: b.opts, Config: cfg,
		Worker: func(a *twice.Attempt) river.Worker[DiffArgs] { return &diffWorker{pool: a.Pool, b: b} }}
	if b.workFollowUps {
		job.Workers = func(a *twice.Attempt) *river.Workers {
			ws := river.NewWorkers()
			river.AddWorker[FollowUpArgs](ws, &followUpWorker{pool: a.Pool})
			return ws
		}
	}
	q := newQueue(job)
	read := func(ctx context.Context, id int64) *rivertype.JobRow {
		row, err := riverpgxv5.New(pool).GetExecutor().JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		return row
	}
	q.onSnooze = func(ctx context.Context, row *rivertype.JobRow) {
		out = append(out, look(ctx, t, pool, read(ctx, row.ID)))
	}
	for n := 1; n <= 40; n++ {
		d := twice.Delivery{JobID: "job-1", Number: n, Pool: pool}
		skip, err := q.fetch(ctx, pool, d)
		if err != nil {
			t.Fatal(err)
		}
		if skip != "" && b.stuck && b.timeout < 0 {
			out = append(out, look(ctx, t, pool, read(ctx, q.check(pool).ids["job-1"])))
			break
		}
		if skip != "" {
			t.Fatalf("the model would not deliver the job (%s) after %v", skip, out)
		}
		if b.stuck && n == 1 {
			continue // its worker died: no return, nothing settled
		}
		d.Err = q.run(ctx, &twice.Attempt{JobID: d.JobID, Number: n, Pool: pool})
		acked, err := q.acked(ctx, pool, d)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.settle(ctx, pool, d); err != nil {
			t.Fatal(err)
		}
		row := read(ctx, q.check(pool).ids["job-1"])
		out = append(out, look(ctx, t, pool, row))
		again := d.Err != nil && !isCancel(d.Err) && !acked && n < q.maxAttempts()
		if finalized := row.FinalizedAt != nil; again == finalized {
			t.Fatalf("twice would deliver again: %t, but the model's row is finalized: %t (%s)", again, finalized, rowText(row))
		}
		if !again {
			break
		}
	}
	if b.workFollowUps {
		out = append(out, modelFollowUps(ctx, t, q, pool)...)
	}
	if b.insertTwice {
		skip, err := q.fetch(ctx, pool, twice.Delivery{JobID: "job-2", Number: 1, Pool: pool})
		if err != nil {
			t.Fatal(err)
		}
		if skip == "" {
			t.Fatalf("the model delivered the second insert of a unique job")
		}
	}
	return out
}

// modelFollowUps works the follow-ups as the check does after a scenario:
// listed by the queue (pending), each delivered by its Run (a real River
// client with the application's Workers), fetched and settled by the
// model.
func modelFollowUps[T river.JobArgs](ctx context.Context, t *testing.T, q *queue[T], pool *pgxpool.Pool) []seen {
	t.Helper()
	pending, err := q.pending(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	var out []seen
	for i, f := range pending {
		if f.Run == nil {
			t.Fatalf("no worker for the follow-up %s", f.Kind)
		}
		if f.After != 30*time.Second {
			t.Fatalf("the follow-up is due after %s, not 30s", f.After)
		}
		d := twice.Delivery{JobID: fmt.Sprintf("follow-up-%d", i+1), Number: 1, Pool: pool, FollowUp: f.Key}
		if skip, err := q.fetch(ctx, pool, d); err != nil || skip != "" {
			t.Fatalf("the model would not deliver the follow-up: %q %v", skip, err)
		}
		d.Err = f.Run(ctx, &twice.Attempt{JobID: d.JobID, Number: 1, Pool: pool})
		if err := q.settle(ctx, pool, d); err != nil {
			t.Fatal(err)
		}
		row, err := riverpgxv5.New(pool).GetExecutor().JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: q.check(pool).ids[d.JobID]})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, look(ctx, t, pool, row))
	}
	return out
}

// riverDoes says in a line what River did, delivery by delivery.
func riverDoes(s []seen) string {
	var parts []string
	for i, x := range s {
		parts = append(parts, fmt.Sprintf("%d: %s", i+1, x.Row))
	}
	return strings.Join(parts, " → ")
}

// errWork is a worker's ordinary error.
var errWork = errors.New("the provider said 503")

// credit gives the order's credit once (guarded by its key).
func credit(ctx context.Context, q interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, orderID int64) error {
	_, err := q.Exec(ctx, `INSERT INTO credits (order_id, amount) VALUES ($1, 50) ON CONFLICT DO NOTHING`, orderID)
	return err
}
