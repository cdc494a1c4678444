package twiceriver

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/twicekit/twicekit/internal/barrier"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The differential suite's concurrent duplicates: the producer inserted
// the job twice (no UniqueOpts: two river_job rows of the same kind and
// args) and a real, started river.Client with two workers runs both copies
// at once, both inside Work together; the model's side is every state the
// check's duplicate-overlap scenarios reach (job-1 paused at each of its
// points while job-2 runs to the end), which River's check plays by
// default.

// duplicate is one row of the suite's concurrent duplicates.
type duplicate struct {
	name string
	// checkDoes is what the check's duplicate-overlaps reach.
	checkDoes string
	// work is the copy's work in its own transaction; s orders the real
	// copies at the points the work offers (nil on the model's side).
	work func(ctx context.Context, tx pgx.Tx, job *river.Job[DiffArgs], s *schedule) error
}

var duplicates = []duplicate{{
	name:      "two copies at once, keyed on the order (INSERT … ON CONFLICT DO NOTHING)",
	checkDoes: "duplicate-overlap (job-1 paused after each of its points while job-2 runs to the end, then resumed): one credit at every point",
	work: func(ctx context.Context, tx pgx.Tx, job *river.Job[DiffArgs], _ *schedule) error {
		return credit(ctx, tx, job.Args.OrderID)
	},
}, {
	name:      "two copies at once, unkeyed (the credit adds 50 each time)",
	checkDoes: "duplicate-overlap: both copies add their 50 at every point, the credit doubled",
	work: func(ctx context.Context, tx pgx.Tx, job *river.Job[DiffArgs], _ *schedule) error {
		return addCredit(ctx, tx, job.Args.OrderID)
	},
}, {
	name:      "two copies at once, check then act (add 50 when the order has no credit)",
	checkDoes: "duplicate-overlap: job-1 paused after its check adds its 50 after job-2's (doubled); paused before it, it sees job-2's credit and adds nothing",
	work: func(ctx context.Context, tx pgx.Tx, job *river.Job[DiffArgs], s *schedule) error {
		if s != nil && s.beforeCheck != nil {
			if err := s.beforeCheck(ctx, tx); err != nil {
				return err
			}
		}
		var credited int
		if err := tx.QueryRow(ctx, `SELECT coalesce(sum(amount), 0) FROM credits WHERE order_id = $1`, job.Args.OrderID).Scan(&credited); err != nil {
			return err
		}
		if s != nil && s.afterCheck != nil {
			if err := s.afterCheck(ctx); err != nil {
				return err
			}
		}
		if credited > 0 {
			return nil
		}
		return addCredit(ctx, tx, job.Args.OrderID)
	},
}}

// addCredit adds 50 to the order's credit, with no key: a second run adds
// again.
func addCredit(ctx context.Context, tx pgx.Tx, orderID int64) error {
	_, err := tx.Exec(ctx, `INSERT INTO credits (order_id, amount) VALUES ($1, 50)
ON CONFLICT (order_id) DO UPDATE SET amount = credits.amount + 50`, orderID)
	return err
}

// dupWorker records each delivery, then does the duplicate's work in a
// transaction of its own. On River's side enter holds each copy until
// both are inside Work, and s orders them.
type dupWorker struct {
	river.WorkerDefaults[DiffArgs]
	pool  *pgxpool.Pool
	d     duplicate
	enter func(context.Context) error
	s     *schedule
}

func (w *dupWorker) Work(ctx context.Context, job *river.Job[DiffArgs]) error {
	if w.enter != nil {
		if err := w.enter(ctx); err != nil {
			return err
		}
	}
	if _, err := w.pool.Exec(ctx, `INSERT INTO deliveries (attempt, snoozes) VALUES ($1, $2)`, job.Attempt, snoozesOf(job.Metadata)); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error { return w.d.work(ctx, tx, job, w.s) })
}

// Timeout outlasts bothInside's 10 s, so that copies that never meet
// fail the test there, not at the config's JobTimeout (2 s).
func (w *dupWorker) Timeout(*river.Job[DiffArgs]) time.Duration { return 15 * time.Second }

// bothInside is the entry barrier of the copies' Work (see
// internal/barrier): they truly run at once, or the test fails.
func bothInside(t *testing.T, n int) func(context.Context) error {
	return barrier.Entry(t, n, "Work")
}

// schedule orders two real copies, both inside Work at once, at the
// points their work offers (a work that offers none runs them free).
type schedule struct {
	name        string
	beforeCheck func(ctx context.Context, tx pgx.Tx) error
	afterCheck  func(ctx context.Context) error
}

// scheduleLock is the advisory lock by which a copy waits, on
// PostgreSQL, for the other's transaction to commit.
const scheduleLock = 20251202

// schedules are the real runs of two copies: both check before either
// acts; one commits before the other checks.
func schedules() []func(t *testing.T) *schedule {
	return []func(t *testing.T) *schedule{
		func(t *testing.T) *schedule {
			return &schedule{name: "both check, then both act", afterCheck: bothInside(t, 2)}
		},
		func(*testing.T) *schedule {
			var mu sync.Mutex
			return &schedule{name: "one commits before the other checks",
				// The first copy here holds the lock in its transaction
				// (until it commits) before the second asks for it, so
				// the second's check waits on PostgreSQL for the first's
				// commit.
				beforeCheck: func(ctx context.Context, tx pgx.Tx) error {
					mu.Lock()
					defer mu.Unlock()
					_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, scheduleLock)
					return err
				}}
		},
	}
}

// onRiverTwice inserts the job twice, then starts a real River client
// with two workers that work both copies at once under s; it returns the
// application's rows and the copies' river_job rows once both ended.
func onRiverTwice(ctx context.Context, t *testing.T, d duplicate, s *schedule) (app, jobs string) {
	t.Helper()
	pool := newDiffDB(ctx, t)
	workers := river.NewWorkers()
	river.AddWorker[DiffArgs](workers, &dupWorker{pool: pool, d: d, enter: bothInside(t, 2), s: s})
	cfg := diffConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.FetchPollInterval = 20 * time.Millisecond
	cfg.FetchCooldown = 5 * time.Millisecond
	cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}
	cfg.Workers = workers
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed,
		river.EventKindJobCancelled, river.EventKindJobSnoozed)
	defer cancel()
	var ids []int64
	for range 2 {
		res, err := client.Insert(ctx, DiffArgs{OrderID: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.UniqueSkippedAsDuplicate {
			t.Fatal("River skipped the second insert of a job without UniqueOpts")
		}
		ids = append(ids, res.Job.ID)
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
	ended := map[int64]string{}
	timer := time.NewTimer(deliveryWait)
	defer timer.Stop()
	for len(ended) < len(ids) {
		select {
		case ev := <-events:
			if ev.Job.FinalizedAt != nil {
				ended[ev.Job.ID] = rowText(ev.Job)
			}
		case <-timer.C:
			t.Fatalf("River did not end both copies within %s: %v", deliveryWait, ended)
		}
	}
	var states []string
	for i, id := range ids {
		states = append(states, fmt.Sprintf("job %d %s", i+1, ended[id]))
	}
	deliveries, credits, _ := appRows(ctx, t, pool)
	return fmt.Sprintf("deliveries %s; credits %s", deliveries, credits), strings.Join(states, ", ")
}

// onModelTwice plays the check with every duplicate-overlap (none stops
// the others: ExploreAllInterleavings; none left out on a slow machine:
// WallBudget(0)) and returns the application's rows each reached, and the
// copies' river_job rows as the model's completer left them once both
// ended. River's own semantics switch the same-job overlaps off (its
// rescuer never runs a job that still runs), which the case requires.
func onModelTwice(ctx context.Context, t *testing.T, d duplicate) (app map[string]bool, jobs map[string]bool) {
	t.Helper()
	job := Job[DiffArgs]{Args: DiffArgs{OrderID: 1}, Schema: appSchema, Config: diffConfig(),
		Worker: func(a *twice.Attempt) river.Worker[DiffArgs] { return &dupWorker{pool: a.Pool, d: d} }}
	why := job.overlapsOff()
	if why == "" {
		t.Fatal("River's check would play same-job overlaps: the case compares concurrent duplicates only")
	}
	// job.Twice(), on a queue the hooks below can read. They keep, per
	// check database, whether job-2 was fetched while job-1 ran (the
	// copies overlap: a duplicate-overlap, not the sequential
	// duplicate-enqueue), and then read both rows once both ended.
	q := newQueue(job)
	var mu sync.Mutex
	type copies struct{ running1, overlap bool }
	byDB := map[*pgxpool.Pool]*copies{}
	jobs = map[string]bool{}
	fetch := func(ctx context.Context, db *pgxpool.Pool, dl twice.Delivery) (string, error) {
		skip, err := q.fetch(ctx, db, dl)
		if skip != "" || err != nil || dl.FollowUp != "" {
			return skip, err
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case dl.JobID == "job-1" && dl.Number == 1: // a scenario begins
			byDB[db] = &copies{running1: true}
		case dl.JobID == "job-2" && byDB[db] != nil && byDB[db].running1:
			byDB[db].overlap = true
		}
		return skip, err
	}
	settle := func(ctx context.Context, db *pgxpool.Pool, dl twice.Delivery) error {
		if err := q.settle(ctx, db, dl); err != nil {
			return err
		}
		mu.Lock()
		c := byDB[db]
		overlap := c != nil && c.overlap
		if c != nil && dl.JobID == "job-1" {
			c.running1 = false
		}
		mu.Unlock()
		if !overlap {
			return nil
		}
		st := q.check(db)
		q.mu.Lock()
		ids := []int64{st.ids["job-1"], st.ids["job-2"]}
		q.mu.Unlock()
		var states []string
		for i, id := range ids {
			row, err := riverpgxv5.New(db).GetExecutor().JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: id})
			if err != nil {
				return err
			}
			if row.FinalizedAt == nil {
				return nil
			}
			states = append(states, fmt.Sprintf("job %d %s", i+1, rowText(row)))
		}
		mu.Lock()
		jobs[strings.Join(states, ", ")] = true
		mu.Unlock()
		return nil
	}
	rep := twice.Check(ctx, twice.Job{Name: d.name, Schema: pgfixture.Migrations(Migrations(), job.Schema), Run: q.run},
		append(q.options(), twice.WithoutOverlappingDeliveries(why),
			twice.QueueBookkeeping(fetch, settle), twice.ExploreAllInterleavings(), twice.WallBudget(0))...)
	if rep.Err != nil {
		t.Fatalf("the model's check:\n%s", rep)
	}
	app = map[string]bool{}
	for _, sr := range rep.Scenarios {
		if sr.Scenario.Kind == twice.DuplicateOverlap && sr.Snapshot != nil {
			app[appLines(sr.Snapshot)] = true
		}
	}
	if len(app) == 0 {
		t.Fatalf("the model played no duplicate-overlap scenario:\n%s", rep)
	}
	return app, jobs
}

// appLines prints a snapshot's application rows as appRows does.
func appLines(snap *pgfixture.Snapshot) string {
	col := func(r pgfixture.Row, name string) string {
		for i, c := range r.Columns {
			if c == name && i < len(r.Values) {
				return r.Values[i]
			}
		}
		return "?"
	}
	var deliveries, credits []string
	for _, r := range snap.Rows("deliveries") {
		deliveries = append(deliveries, fmt.Sprintf("(attempt %s, snoozes %s)", col(r, "attempt"), col(r, "snoozes")))
	}
	for _, r := range snap.Rows("credits") {
		credits = append(credits, fmt.Sprintf("(%s, %s)", col(r, "order_id"), col(r, "amount")))
	}
	none := func(s []string) string {
		if len(s) == 0 {
			return "none"
		}
		return strings.Join(s, " ")
	}
	return fmt.Sprintf("deliveries %s; credits %s", none(deliveries), none(credits))
}

// joined prints distinct states sorted, one after another.
func joined(states map[string]bool) string {
	return strings.Join(slices.Sorted(maps.Keys(states)), "\n-- or --\n")
}

// riverTwice works the duplicate on River's client under each schedule
// and through the model, fails the test where the states they reach
// differ, and says what River did.
func riverTwice(t *testing.T, d duplicate) string {
	ctx := t.Context()
	app, jobs := map[string]bool{}, map[string]bool{}
	var bySchedule []string
	for _, s := range schedules() {
		s := s(t)
		a, j := onRiverTwice(ctx, t, d, s)
		app[a], jobs[j] = true, true
		bySchedule = append(bySchedule, fmt.Sprintf("%s: %s", s.name, a))
	}
	modelApp, modelJobs := onModelTwice(ctx, t, d)
	if joined(app) != joined(modelApp) {
		t.Errorf("the model's duplicate overlaps reach other rows than River's two workers:\nRiver:\n%s\nmodel:\n%s\n(River, by schedule:\n%s)",
			joined(app), joined(modelApp), strings.Join(bySchedule, "\n"))
	}
	if joined(jobs) != joined(modelJobs) {
		t.Errorf("the model leaves the copies' river_job rows otherwise than River:\nRiver:\n%s\nmodel:\n%s", joined(jobs), joined(modelJobs))
	}
	return strings.Join(slices.Sorted(maps.Keys(app)), " or ") + "; " + strings.Join(slices.Sorted(maps.Keys(jobs)), " or ")
}
