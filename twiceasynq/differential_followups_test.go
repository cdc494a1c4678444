package twiceasynq

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/twicekit/twicekit/internal/docsblock"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The differential suite's follow-ups: the ship handler enqueues the
// order's reward through asynq's client (a real *asynq.Client on one side,
// NewClient(a) on the other), and the reward is worked with the mux's
// handler for its type, under the reward's own options. Compared: the
// deliveries of both tasks (task ID, retry count, max retry and queue each
// handler saw), the rows, and the reward's final state.

type followUpDiffCase struct {
	name   string
	opts   []asynq.Option // the reward's, besides TaskID("reward:9812")
	reward func(pool *pgxpool.Pool) asynq.Handler
	// noTaskID leaves TaskID("reward:9812") out; twice enqueues the reward
	// twice in the ship handler's run (the second answer is compared).
	noTaskID, twice bool
}

// enqueues records the answers to the ship handler's enqueues of its
// first run (the reference run's, on the model's side) and the IDs of the
// tasks accepted.
type enqueues struct {
	mu      sync.Mutex
	n       int // the enqueues of one run
	answers []string
	ids     []string
}

// shipRecorded is ship enqueuing the reward n times through c, recording
// the answers in r; a refused enqueue counts as done.
func shipRecorded(pool *pgxpool.Pool, c enqueuer, r *enqueues, opts ...asynq.Option) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		id, err := orderOf(t)
		if err != nil {
			return err
		}
		if _, err := pool.Exec(ctx, `UPDATE orders SET status = 'shipped' WHERE id = $1`, id); err != nil {
			return err
		}
		for range r.n {
			info, err := c.EnqueueContext(ctx, asynq.NewTask(rewardType, payload(id)), opts...)
			answer := "accepted"
			switch {
			case errors.Is(err, asynq.ErrDuplicateTask):
				answer = "ErrDuplicateTask"
			case errors.Is(err, asynq.ErrTaskIDConflict):
				answer = "ErrTaskIDConflict"
			case err != nil:
				return err
			}
			r.mu.Lock()
			if len(r.answers) < r.n {
				r.answers = append(r.answers, answer)
				if info != nil {
					r.ids = append(r.ids, info.ID)
				}
			}
			r.mu.Unlock()
		}
		return nil
	}
}

// record is what r recorded: the task IDs (the ship task's first) and the
// answers after the first.
func (r *enqueues) record() (ids []string, again string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids = append([]string{followUpIDs[0]}, r.ids...)
	if len(r.answers) > 1 {
		again = strings.Join(r.answers[1:], ", ")
	}
	return ids, again
}

// failsFirst fails the reward's first delivery, then runs h.
func failsFirst(h func(*pgxpool.Pool) asynq.Handler) func(*pgxpool.Pool) asynq.Handler {
	return func(pool *pgxpool.Pool) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
			if n, _ := asynq.GetRetryCount(ctx); n == 0 {
				return fmt.Errorf("the partner was down")
			}
			return h(pool).ProcessTask(ctx, t)
		})
	}
}

// alwaysFails fails every delivery with err.
func alwaysFails(err error) func(*pgxpool.Pool) asynq.Handler {
	return func(*pgxpool.Pool) asynq.Handler {
		return asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return err })
	}
}

var followUpDiffCases = []followUpDiffCase{
	{name: "follow-up worked", reward: once},
	{name: "follow-up in 1 s, on the critical queue", opts: []asynq.Option{asynq.ProcessIn(time.Second), asynq.Queue("critical")}, reward: once},
	{name: "follow-up failed once, then retried", opts: []asynq.Option{asynq.MaxRetry(3)}, reward: failsFirst(once)},
	{name: "follow-up fails, MaxRetry(1) archives it", opts: []asynq.Option{asynq.MaxRetry(1)}, reward: alwaysFails(fmt.Errorf("the partner refused"))},
	{name: "follow-up SkipRetry archives it", reward: alwaysFails(fmt.Errorf("no such order: %w", asynq.SkipRetry))},
	{name: "follow-up kept for Retention", opts: []asynq.Option{asynq.Retention(time.Hour)}, reward: once},
	{name: "follow-up enqueued twice under its TaskID", opts: []asynq.Option{asynq.ProcessIn(time.Second)}, reward: once, twice: true},
	{name: "Unique follow-up enqueued twice", opts: []asynq.Option{asynq.Unique(time.Hour), asynq.ProcessIn(time.Second)}, reward: once, noTaskID: true, twice: true},
	{name: "follow-up enqueued twice, no TaskID nor Unique", opts: []asynq.Option{asynq.ProcessIn(time.Second)}, reward: once, noTaskID: true, twice: true},
}

// followUpIDs are the two tasks' IDs, the same on both sides.
var followUpIDs = []string{"ship:9812", "reward:9812"}

func (c followUpDiffCase) rewardOpts() []asynq.Option {
	if c.noTaskID {
		return c.opts
	}
	return append([]asynq.Option{asynq.TaskID("reward:9812")}, c.opts...)
}

// unordered says the case's rewards are two alike tasks due in the same
// second. asynq scores a scheduled task by its due time in whole seconds,
// and Redis orders equal scores by member: the tasks' random IDs. Which of
// the two asynq works first is then chance, so their deliveries are
// compared without their serial.
func (c followUpDiffCase) unordered() bool { return c.noTaskID && c.twice }

// deliveriesOf is rowsOf for the case: unnumbered when it is unordered.
func (c followUpDiffCase) deliveriesOf(s *pgfixture.Snapshot, ids []string) (deliveries, rows []string) {
	deliveries, rows = rowsOf(s, ids)
	if c.unordered() {
		deliveries = unnumbered(deliveries)
	}
	return deliveries, rows
}

// record is a fresh record of the case's enqueues.
func (c followUpDiffCase) record() *enqueues {
	if c.twice {
		return &enqueues{n: 2}
	}
	return &enqueues{n: 1}
}

func TestModelAgreesWithAsynqOnFollowUps(t *testing.T) {
	t.Parallel()
	ro := startRedis(t)
	engines := compareEach(t, followUpDiffCases, func(c followUpDiffCase) string { return c.name }, runFollowUpModel,
		func(t *testing.T, c followUpDiffCase) outcome { return runFollowUpAsynq(t, ro, c) })
	if engines != nil {
		docsblock.Check(t, "../docs/queues.md", "twiceasynq:followups", followUpTable(followUpDiffCases, engines))
	}
}

// TestRedisClientAgreesOnFollowUps holds the app's own *asynq.Client on
// RedisClientOpt(a) to the table NewClient(a) is held to: the same cases,
// delivery by delivery, and the table of docs/queues.md that asynq wrote.
func TestRedisClientAgreesOnFollowUps(t *testing.T) {
	t.Parallel()
	engines := compareEach(t, followUpDiffCases, func(c followUpDiffCase) string { return c.name }, runFollowUpModel,
		func(t *testing.T, c followUpDiffCase) outcome { return runFollowUpModelWith(t, c, redisClient) })
	if engines != nil {
		docsblock.Check(t, "../docs/queues.md", "twiceasynq:followups", followUpTable(followUpDiffCases, engines))
	}
}

// redisClient is the app's own asynq client on the attempt's Redis.
func redisClient(a *twice.Attempt) enqueuer { return asynq.NewClient(RedisClientOpt(a)) }

// modelClient is the attempt's Client.
func modelClient(a *twice.Attempt) enqueuer { return NewClient(a) }

// runFollowUpModel is the check's reference run with Job.Mux: the ship
// task, then its reward as a follow-up, enqueued through NewClient(a).
func runFollowUpModel(t *testing.T, c followUpDiffCase) outcome {
	return runFollowUpModelWith(t, c, modelClient)
}

// runFollowUpModelWith is runFollowUpModel with the ship handler's client
// built by client. The reward's final state is the model's Redis once the
// reference run's follow-up was settled for the last time (the first
// follow-up of the check).
func runFollowUpModelWith(t *testing.T, c followUpDiffCase, client func(*twice.Attempt) enqueuer) outcome {
	r := c.record()
	job := Job{Schema: schema, Seed: seed, Task: asynq.NewTask(shipType, payload(9812), asynq.TaskID(followUpIDs[0])),
		Handler: func(a *twice.Attempt) asynq.Handler {
			return logged(a.Pool, shipRecorded(a.Pool, client(a), r, c.rewardOpts()...))
		},
		Mux: func(a *twice.Attempt) *asynq.ServeMux {
			mux := asynq.NewServeMux()
			mux.Handle(shipType, logged(a.Pool, shipRecorded(a.Pool, client(a), r, c.rewardOpts()...)))
			mux.Handle(rewardType, logged(a.Pool, c.reward(a.Pool)))
			return mux
		}}
	q := newQueue(job)
	var mu sync.Mutex
	state := ""
	settle := func(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) error {
		if err := q.settle(ctx, db, d); err != nil {
			return err
		}
		if d.FollowUp == "asynq-1" {
			q.mu.Lock()
			s := q.checks[db].followUp(d.FollowUp).state.String()
			q.mu.Unlock()
			mu.Lock()
			state = s
			mu.Unlock()
		}
		return nil
	}
	rep := twice.Check(t.Context(), twice.Job{Name: c.name, Schema: schema, Seed: seed, Run: q.run},
		append(q.options(), twice.QueueBookkeeping(q.fetch, settle), twice.WorkFollowUps(q.pending), twice.Only("crash@1"))...)
	if rep.Err != nil {
		t.Fatalf("the model's check: %v", rep.Err)
	}
	var o outcome
	ids, again := r.record()
	o.Deliveries, o.Rows = c.deliveriesOf(rep.Reference.Snapshot, ids)
	o.Again = again
	mu.Lock()
	o.State = state
	mu.Unlock()
	if o.State == "" {
		t.Fatalf("the model worked no follow-up in its reference run:\n%s", rep)
	}
	return o
}

// runFollowUpAsynq runs the ship task on a real asynq.Server whose mux
// routes both types, the ship handler enqueuing through a real client.
func runFollowUpAsynq(t *testing.T, ro *redis.Options, c followUpDiffCase) outcome {
	ctx := t.Context()
	db, rc, client, inspector := engineWorld(t, ro)
	r := c.record()
	mux := asynq.NewServeMux()
	mux.Handle(shipType, logged(db.Pool(), shipRecorded(db.Pool(), client, r, c.rewardOpts()...)))
	mux.Handle(rewardType, logged(db.Pool(), c.reward(db.Pool())))
	srv := newServer(rc)
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	if _, err := client.Enqueue(asynq.NewTask(shipType, payload(9812), asynq.TaskID(followUpIDs[0]))); err != nil {
		t.Fatal(err)
	}
	waitEnded(t, inspector, defaultQueue, followUpIDs[0])
	var o outcome
	ids, again := r.record()
	o.Again = again
	for i, id := range ids[1:] {
		if s := waitEnded(t, inspector, composeOptions(nil, c.rewardOpts()).queue, id); i == 0 {
			o.State = s
		}
	}
	snap, err := db.Snapshot(ctx, pgfixture.GeneratedKeys())
	if err != nil {
		t.Fatal(err)
	}
	o.Deliveries, o.Rows = c.deliveriesOf(snap, ids)
	return o
}

var deliveryRow = regexp.MustCompile(`task_id=‹(task \d)›, retry_count=(\d+), max_retry=(\d+), queue='(\w+)'`)

// followUpTable is docs/queues.md's table of what asynq did with the
// follow-ups, written from asynq's outcomes.
func followUpTable(cases []followUpDiffCase, outcomes []outcome) string {
	var b strings.Builder
	b.WriteString("| case | the follow-up's options | deliveries (task, retry count/max retry, queue) | the follow-up's final state | its second enqueue | points |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for i, c := range cases {
		var opts []string
		for _, o := range c.rewardOpts() {
			opts = append(opts, "`"+o.String()+"`")
		}
		var deliveries []string
		for _, d := range outcomes[i].Deliveries {
			if m := deliveryRow.FindStringSubmatch(d); m != nil {
				deliveries = append(deliveries, fmt.Sprintf("%s %s/%s %s", m[1], m[2], m[3], m[4]))
			}
		}
		p := "?"
		for _, r := range outcomes[i].Rows {
			if m := pointsOf.FindStringSubmatch(r); m != nil {
				p = m[1]
			}
		}
		again := outcomes[i].Again
		if again == "" {
			again = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", c.name, strings.Join(opts, " "), strings.Join(deliveries, ", "), outcomes[i].State, again, p)
	}
	return b.String()
}
