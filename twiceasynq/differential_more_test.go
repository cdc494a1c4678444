package twiceasynq

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/twicekit/twicekit/internal/barrier"
	"github.com/twicekit/twicekit/twice"
)

// The differential suite's concurrent duplicates: the producer enqueued
// the task twice (no TaskID: two task IDs) and a real asynq.Server with
// two workers runs both copies at once, both inside the handler together;
// the model's side is every state its duplicate-overlap scenarios reach
// (job-1 paused at each of its points while job-2 runs to the end).

// rewardPerOrder keys the reward on the order, not the task ID, in the
// increment's transaction: a second copy (another task ID) adds nothing.
func rewardPerOrder(pool *pgxpool.Pool) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		id, err := orderOf(t)
		if err != nil {
			return err
		}
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `INSERT INTO processed_tasks VALUES ('order:' || $1::bigint) ON CONFLICT DO NOTHING`, id)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			_, err = tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = (SELECT customer_id FROM orders WHERE id = $1)`, id)
			return err
		})
	}
}

// bothInside is the entry barrier of the copies' the handler (see
// internal/barrier): they truly run at once, or the test fails.
func bothInside(t *testing.T, n int) func(context.Context) error {
	return barrier.Entry(t, n, "the handler")
}

// rewardIfNoPoints checks the customer's points, then adds 50 when there
// were none, in one transaction: check, then act, with no key. Under the
// suite's real schedules it calls the schedule's hooks around its check.
func rewardIfNoPoints(pool *pgxpool.Pool) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		s, _ := ctx.Value(scheduleKey{}).(*schedule)
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if s != nil && s.beforeCheck != nil {
				if err := s.beforeCheck(ctx); err != nil {
					return err
				}
			}
			var points int
			if err := tx.QueryRow(ctx, `SELECT points FROM customers WHERE id = 77`).Scan(&points); err != nil {
				return err
			}
			if s != nil && s.afterCheck != nil {
				if err := s.afterCheck(ctx); err != nil {
					return err
				}
			}
			if points > 0 {
				return nil
			}
			_, err := tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
			return err
		})
	}
}

// schedule orders two real copies of a task, both inside the handler at
// once (bothInside at its start), at the points a handler offers (one that
// offers none runs them free). done is called when a copy's handler
// returned.
type schedule struct {
	beforeCheck, afterCheck func(ctx context.Context) error
	done                    func(ctx context.Context)
}

type scheduleKey struct{}

// schedules are the real runs of two copies: both check before either
// acts; one commits before the other checks.
func schedules() []func(t *testing.T) *schedule {
	return []func(t *testing.T) *schedule{
		func(t *testing.T) *schedule {
			both := bothInside(t, 2)
			return &schedule{afterCheck: both}
		},
		func(*testing.T) *schedule {
			var mu sync.Mutex
			var first string
			committed := make(chan struct{})
			return &schedule{
				beforeCheck: func(ctx context.Context) error {
					id, _ := asynq.GetTaskID(ctx)
					mu.Lock()
					if first == "" {
						first = id
						mu.Unlock()
						return nil
					}
					mu.Unlock()
					select { // the first copy's handler returned: its transaction committed
					case <-committed:
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				},
				done: func(ctx context.Context) {
					id, _ := asynq.GetTaskID(ctx)
					mu.Lock()
					defer mu.Unlock()
					if id == first {
						close(committed)
					}
				},
			}
		},
	}
}

// joinOutcomes is the one outcome reached, or all of them (Or), in the
// order of their printed forms.
func joinOutcomes(reached map[string]outcome) outcome {
	if len(reached) == 1 {
		for _, o := range reached {
			return o
		}
	}
	var o outcome
	for _, k := range slices.Sorted(maps.Keys(reached)) {
		o.Or = append(o.Or, reached[k])
	}
	return o
}

// twoAtOnce enqueues the task twice, then starts a server with two
// workers, each entering the handler only once both are inside it, then
// ordered by s; it returns the two task IDs and both copies' final states.
func twoAtOnce(t *testing.T, rc *redis.Client, client *asynq.Client, in *asynq.Inspector, task *asynq.Task, h asynq.Handler, s *schedule) ([]string, string) {
	var infos []*asynq.TaskInfo
	for range 2 {
		info, err := client.Enqueue(task)
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, info)
	}
	enter := bothInside(t, 2)
	srv := newServerN(rc, 2)
	if err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, tk *asynq.Task) error {
		if err := enter(ctx); err != nil {
			return err
		}
		ctx = context.WithValue(ctx, scheduleKey{}, s)
		err := h.ProcessTask(ctx, tk)
		if s.done != nil {
			s.done(ctx)
		}
		return err
	})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	var ids, states []string
	for i, info := range infos {
		ids = append(ids, info.ID)
		states = append(states, fmt.Sprintf("task %d %s", i+1, waitEnded(t, in, info.Queue, info.ID)))
	}
	return ids, strings.Join(states, ", ")
}

// modelDuplicates plays the check with every duplicate-overlap (asynq's
// check plays them by default; ExploreAllInterleavings: none stops the
// others; WallBudget(0): none left out on a slow machine) and returns what
// they reached: the deliveries and rows of each, and the copies' final
// states as the model's Redis holds them once both ended (in any of its
// scenarios that ran both: it keeps no state per scenario). Every scenario
// reaching the same is one outcome; more are printed all, and differ from
// asynq's one.
func modelDuplicates(t *testing.T, c diffCase) outcome {
	job := Job{Schema: schema, Seed: seed, Task: asynq.NewTask(rewardType, payload(c.order), c.opts...),
		Handler: func(a *twice.Attempt) asynq.Handler { return logged(a.Pool, c.handler(a.Pool)) }}
	q := newQueue(job)
	var mu sync.Mutex
	ended := map[string]bool{} // both copies' states once both ended, in any scenario that ran both
	settle := func(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) error {
		if err := q.settle(ctx, db, d); err != nil {
			return err
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		t1, t2 := q.checks[db].tasks["job-1"], q.checks[db].tasks["job-2"]
		if t1 != nil && t2 != nil && t1.state != stateActive && t1.state != stateRetry && t2.state != stateActive && t2.state != stateRetry {
			mu.Lock()
			ended[fmt.Sprintf("task 1 %s, task 2 %s", t1.state, t2.state)] = true
			mu.Unlock()
		}
		return nil
	}
	rep := twice.Check(t.Context(), twice.Job{Name: c.name, Schema: schema, Seed: seed, Run: q.run},
		append(q.options(), twice.QueueBookkeeping(q.fetch, settle), twice.ExploreAllInterleavings(), twice.WallBudget(0))...)
	if rep.Err != nil {
		t.Fatalf("the model's check: %v", rep.Err)
	}
	ids := []string{"00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"}
	states := slices.Sorted(maps.Keys(ended))
	reached := map[string]outcome{}
	for _, sr := range rep.Scenarios {
		if sr.Scenario.Kind != twice.DuplicateOverlap || sr.Snapshot == nil {
			continue
		}
		o := outcome{State: strings.Join(states, " or ")}
		o.Deliveries, o.Rows = rowsOf(sr.Snapshot, ids)
		o.Deliveries = unnumbered(o.Deliveries)
		reached[o.String()] = o
	}
	if len(reached) == 0 {
		t.Fatalf("the model played no duplicate-overlap scenario:\n%s", rep)
	}
	return joinOutcomes(reached)
}

var serial = regexp.MustCompile(`^\(n=\d+, `)

// unnumbered leaves out the deliveries' serial: which copy logged first is
// the race's, not the queue's (the model's overlaps always start job-1).
func unnumbered(deliveries []string) []string {
	var out []string
	for _, d := range deliveries {
		out = append(out, serial.ReplaceAllString(d, "("))
	}
	slices.Sort(out)
	return out
}
