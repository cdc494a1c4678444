package twiceriver_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceriver"
)

// CloseMonthArgs are the args of a River periodic job that closes a month
// of sales: its constructor names the month before the run's time.
type CloseMonthArgs struct {
	Month string `json:"month"` // "2026-09"
}

func (CloseMonthArgs) Kind() string { return "close_month" }

// closeMonthArgs is the app's constructor with its time.Now() taken as a
// parameter: the run at now closes the month before it, and has one
// attempt only. The app gives River
// func() (river.JobArgs, *river.InsertOpts) { return closeMonthArgs(time.Now()) }.
func closeMonthArgs(now time.Time) (CloseMonthArgs, *river.InsertOpts) {
	prev := time.Date(now.Year(), now.Month()-1, 1, 0, 0, 0, 0, time.UTC)
	return CloseMonthArgs{Month: prev.Format("2006-01")}, &river.InsertOpts{MaxAttempts: 1}
}

// monthly is the app's schedule: at midnight on the first of every month.
type monthly struct{}

func (monthly) Next(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
}

var closeMonthSchema = pgfixture.SQL(`
CREATE TABLE sales (id bigint PRIMARY KEY, month text NOT NULL, amount int NOT NULL);
CREATE TABLE month_close (month text PRIMARY KEY, total bigint NOT NULL);
CREATE TABLE close_cursor (id int PRIMARY KEY, next_month text NOT NULL);`)

// The check's clock starts on 12 October 2026: the first run closes
// September, the next (1 November) October.
var closeMonthSeed = twice.SeedSQL(`
INSERT INTO sales VALUES (1, '2026-09', 1200), (2, '2026-09', 300), (3, '2026-10', 450);
INSERT INTO close_cursor VALUES (1, '2026-09');`)

// closeOne closes month in tx: its total, recorded once.
func closeOne(ctx context.Context, tx pgx.Tx, month string) error {
	_, err := tx.Exec(ctx, `
INSERT INTO month_close (month, total)
SELECT $1, coalesce(sum(amount), 0) FROM sales WHERE month = $1
ON CONFLICT (month) DO NOTHING`, month)
	return err
}

// closeMonthWorker closes months. catchUp closes every month from its
// cursor up to the month in its args, one transaction each, so a run
// River gave up on is closed by the next. Without it, it closes the month
// in its args only (idempotently), trusting the next periodic run as its
// retry: the next run closes the next month, and the month whose run
// River gave up on is never closed.
type closeMonthWorker struct {
	river.WorkerDefaults[CloseMonthArgs]
	a       *twice.Attempt
	catchUp bool
	seen    *monthsSeen
}

func (w *closeMonthWorker) Work(ctx context.Context, job *river.Job[CloseMonthArgs]) error {
	w.seen.add(w.a.JobID, job.Args.Month, w.a.Now())
	if !w.catchUp {
		return pgx.BeginFunc(ctx, w.a.Pool, func(tx pgx.Tx) error { return closeOne(ctx, tx, job.Args.Month) })
	}
	for {
		done := false
		err := pgx.BeginFunc(ctx, w.a.Pool, func(tx pgx.Tx) error {
			var next string
			if err := tx.QueryRow(ctx, `SELECT next_month FROM close_cursor WHERE id = 1 FOR UPDATE`).Scan(&next); err != nil {
				return err
			}
			if next > job.Args.Month {
				done = true
				return nil
			}
			if err := closeOne(ctx, tx, next); err != nil {
				return err
			}
			m, err := time.Parse("2006-01", next)
			if err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `UPDATE close_cursor SET next_month = $1 WHERE id = 1`, m.AddDate(0, 1, 0).Format("2006-01"))
			return err
		})
		if err != nil || done {
			return err
		}
	}
}

// monthsSeen records the month in the args of every next scheduled run,
// and that run's time on the check's clock.
type monthsSeen struct {
	mu     sync.Mutex
	months []string
	at     []time.Time
}

func (s *monthsSeen) add(jobID, month string, now time.Time) {
	if jobID != "next-run" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.months, month) {
		s.months = append(s.months, month)
	}
	if !slices.ContainsFunc(s.at, now.Equal) {
		s.at = append(s.at, now)
	}
}

func closeMonthJob(catchUp bool, seen *monthsSeen) twiceriver.Job[CloseMonthArgs] {
	return twiceriver.Job[CloseMonthArgs]{
		Schema: closeMonthSchema,
		Seed:   closeMonthSeed,
		// river.NewPeriodicJob(monthly{}, func() (river.JobArgs,
		// *river.InsertOpts) { return closeMonthArgs(time.Now()) }, nil).
		PeriodicJob: &twiceriver.PeriodicJob[CloseMonthArgs]{Schedule: monthly{}, Args: closeMonthArgs},
		Worker: func(a *twice.Attempt) river.Worker[CloseMonthArgs] {
			return &closeMonthWorker{a: a, catchUp: catchUp, seen: seen}
		},
	}
}

// A periodic job's next run is inserted with the args its constructor
// builds at that run's time (Job.PeriodicJob): the next run of a job
// closing "the month before now" closes October, not September again. The
// worker that catches up from its cursor passes: a run River gave up on
// (one attempt) is closed by the next. Its twin that closes the month in
// its args only is flagged: a crash loses September for good, since the
// next run closes October. Through Job.Periodic, which replays the first
// run's args, the same twin passes: its next run closes September again,
// which the real next run never does.
func TestPeriodicJobBuildsTheNextRunsArgs(t *testing.T) {
	t.Parallel()
	seen := &monthsSeen{}
	rep := twiceriver.Check(t.Context(), closeMonthJob(true, seen))
	if rep.Err != nil || !rep.OK() {
		t.Fatalf("the worker catching up from its cursor:\n%s", rep)
	}
	if want := []string{"2026-10"}; !slices.Equal(seen.months, want) {
		t.Errorf("the next runs' args named months %v, want %v (built at the next run's time)", seen.months, want)
	}
	if want := time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC); len(seen.at) != 1 || !seen.at[0].Equal(want) {
		t.Errorf("the next runs ran at %v on the check's clock, want %v (the schedule's next time)", seen.at, want)
	}

	seen = &monthsSeen{}
	rep = twiceriver.Check(t.Context(), closeMonthJob(false, seen))
	if rep.Err != nil || rep.OK() {
		t.Fatalf("the worker closing only the month in its args is expected to be flagged:\n%s", rep)
	}
	if s := rep.String(); !strings.Contains(s, "then the next scheduled run") || !strings.Contains(s, "2026-09") {
		t.Errorf("no finding says the next scheduled run left September unclosed:\n%s", s)
	}

	// The same twin with the first run's args replayed: passes.
	seen = &monthsSeen{}
	replayed := closeMonthJob(false, seen)
	replayed.Args, replayed.InsertOpts = closeMonthArgs(time.Date(2026, time.October, 12, 9, 0, 0, 0, time.UTC)) // the check's clock's start
	replayed.PeriodicJob, replayed.Periodic = nil, monthly{}
	rep = twiceriver.Check(t.Context(), replayed)
	if rep.Err != nil || !rep.OK() {
		t.Fatalf("the same worker through Job.Periodic (the first run's args replayed) is expected to pass:\n%s", rep)
	}
	if want := []string{"2026-09"}; !slices.Equal(seen.months, want) {
		t.Errorf("the replayed next runs' args named months %v, want %v", seen.months, want)
	}
}

// The app's constructor as given to river.NewPeriodicJob (Constructor)
// is called for every run too; it reads no clock of the check's. One
// that builds the same month at every run (as time.Now() does within a
// check) gives the next run the first run's month, so the twin closing
// the month in its args passes, as under Job.Periodic. Its nil insert
// options are Job.InsertOpts (one attempt).
func TestPeriodicJobTakesTheAppsConstructor(t *testing.T) {
	t.Parallel()
	seen := &monthsSeen{}
	job := closeMonthJob(false, seen)
	job.InsertOpts = &river.InsertOpts{MaxAttempts: 1}
	job.PeriodicJob = &twiceriver.PeriodicJob[CloseMonthArgs]{
		Schedule:    monthly{},
		Constructor: func() (river.JobArgs, *river.InsertOpts) { return CloseMonthArgs{Month: "2026-09"}, nil },
	}
	rep := twiceriver.Check(t.Context(), job)
	if rep.Err != nil || !rep.OK() {
		t.Fatalf("the twin with a constructor building September at every run:\n%s", rep)
	}
	if want := []string{"2026-09"}; !slices.Equal(seen.months, want) {
		t.Errorf("the next runs' args named months %v, want %v (the constructor's)", seen.months, want)
	}
	js, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"max_deliveries": 1,`) {
		t.Errorf("the JSON report's max_deliveries is not Job.InsertOpts' MaxAttempts (1):\n%s", js)
	}
}
