package twicegue

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/vgarvardt/gue/v5"

	"github.com/twicekit/twicekit/internal/barrier"
	"github.com/twicekit/twicekit/twice"
)

// The differential suite's follow-up and concurrent-duplicate cases: the
// model's side is the check itself (its reference run working the
// follow-up with Job.WorkFollowUps; its duplicate-overlap scenarios),
// gue's side real Workers on PostgreSQL.

const bonusType = "bonus"

// rewardThenBonus rewards the order once and enqueues, in j.Tx(), the
// bonus 30 s later: it commits with gue's deletion of the job.
func rewardThenBonus(pool *pgxpool.Pool) gue.WorkFunc { return rewardThenEnqueue(pool, bonusType) }

// bonusInTx is the follow-up's own work: 5 points in its j.Tx().
func bonusInTx(ctx context.Context, j *gue.Job) error {
	id, err := orderOf(j)
	if err != nil {
		return err
	}
	_, err = j.Tx().Exec(ctx, `UPDATE customers SET points = points + 5 WHERE id = (SELECT customer_id FROM orders WHERE id = $1)`, id)
	return err
}

// bothInside is the entry barrier of the copies' the work function (see
// internal/barrier): they truly run at once, or the test fails.
func bothInside(t *testing.T, n int) func(context.Context) error {
	return barrier.Entry(t, n, "the work function")
}

// rewardIfNoPoints checks the customer's points in j.Tx(), then adds 50
// when there were none: check, then act, with no key. Under the suite's
// real schedules it calls the schedule's hooks around its check.
func rewardIfNoPoints(ctx context.Context, j *gue.Job) error {
	s, _ := ctx.Value(scheduleKey{}).(*schedule)
	if s != nil && s.beforeCheck != nil {
		if err := s.beforeCheck(ctx, j); err != nil {
			return err
		}
	}
	var points int
	if err := j.Tx().QueryRow(ctx, `SELECT points FROM customers WHERE id = 77`).Scan(&points); err != nil {
		return err
	}
	if s != nil && s.afterCheck != nil {
		if err := s.afterCheck(ctx, j); err != nil {
			return err
		}
	}
	if points > 0 {
		return nil
	}
	_, err := j.Tx().Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
	return err
}

// schedule orders two real copies of a job, both inside the work
// function at once (bothInside at its start), at the points a work
// function offers (a work function that offers none runs them free).
type schedule struct {
	name                    string
	beforeCheck, afterCheck func(ctx context.Context, j *gue.Job) error
}

type scheduleKey struct{}

// schedules are the real runs of two copies: both check before either
// acts; one commits before the other checks.
func schedules() []func(t *testing.T) *schedule {
	return []func(t *testing.T) *schedule{
		func(t *testing.T) *schedule {
			both := bothInside(t, 2)
			return &schedule{name: "both check, then both act",
				afterCheck: func(ctx context.Context, _ *gue.Job) error { return both(ctx) }}
		},
		func(*testing.T) *schedule {
			var mu sync.Mutex
			var first *gue.Job
			return &schedule{name: "one commits before the other checks",
				beforeCheck: func(ctx context.Context, j *gue.Job) error {
					mu.Lock()
					if first == nil {
						first = j
						mu.Unlock()
						return nil
					}
					mu.Unlock()
					// The first copy holds its job's row locked until gue's
					// commit deletes it: waiting for that lock is waiting
					// for the commit.
					_, err := j.Tx().Exec(ctx, `SELECT 1 FROM gue_jobs WHERE job_id = $1 FOR UPDATE`, first.ID.String())
					return err
				}}
		},
	}
}

// joinStates prints distinct states sorted, one after another.
func joinStates(states map[string]bool) string {
	out := slices.Sorted(maps.Keys(states))
	return strings.Join(out, "\n-- or --\n")
}

// modelFollowUps is the check's reference run (one clean run), which
// works the follow-up with the WorkMap (Job.WorkFollowUps): what it left.
func modelFollowUps(t *testing.T, c gueCase) string {
	rep := Check(t.Context(), c.job(), twice.Only("crash@1"))
	if rep.Err != nil || rep.Reference == nil || rep.Reference.Snapshot == nil {
		t.Fatalf("the model's check:\n%s", rep)
	}
	var names []string
	for _, a := range rep.Reference.Attempts {
		names = append(names, a.Name())
	}
	if !slices.Contains(names, "attempt 1 of follow-up-1") {
		t.Fatalf("the model's reference run did not work the follow-up (%v):\n%s", names, rep)
	}
	return linesOf(rep.Reference.Snapshot)
}

// modelDuplicates is every final state the check's duplicate-overlap
// scenarios reach (job-1 paused at each of its points while job-2 runs),
// one after another. Every overlap plays (ExploreAllInterleavings: none
// stops the others; WallBudget(0): none left out on a slow machine); the
// same-job overlaps, which gue's check plays too, are not this case's
// subject and are switched off (which plays the duplicates by default).
func modelDuplicates(t *testing.T, c gueCase) string {
	rep := Check(t.Context(), c.job(), twice.WithoutOverlappingDeliveries("the suite compares the concurrent duplicates"),
		twice.ExploreAllInterleavings(), twice.WallBudget(0))
	if rep.Err != nil {
		t.Fatalf("the model's check:\n%s", rep)
	}
	states := map[string]bool{}
	for _, sr := range rep.Scenarios {
		if sr.Scenario.Kind == twice.DuplicateOverlap && sr.Snapshot != nil {
			states[linesOf(sr.Snapshot)] = true
		}
	}
	if len(states) == 0 {
		t.Fatalf("the model played no duplicate-overlap scenario:\n%s", rep)
	}
	return joinStates(states)
}
