package twiceasynq

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/twicekit/twicekit/internal/docsblock"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The differential suite: each case runs the same handler under the model
// (twice's check, playing one scenario) and on a real asynq.Server against
// a real Redis, and compares what happened: the deliveries and what asynq's
// context said in each (task, retry count, max retry, queue), the rows, the
// task's final state in Redis and what asynq's client answered to the same
// task enqueued again.

type diffCase struct {
	name    string
	order   int64
	opts    []asynq.Option
	handler func(pool *pgxpool.Pool) asynq.Handler
	// token is the scenario the model plays: once, crash@end (the worker
	// dies after the handler returned, before the ack; its lease expires)
	// or duplicate-enqueue (the task enqueued again once the first ended),
	// or duplicate-overlap (two copies, two task IDs, run at once: every
	// state the model's duplicate-overlap scenarios reach,
	// differential_more_test.go).
	token string
}

// outcome is what one engine did with a case.
type outcome struct {
	Deliveries []string // (task, retry_count, max_retry, queue), in order
	Rows       []string // customers and processed_tasks
	State      string   // the first task's final state: deleted, completed, archived
	Again      string   // the enqueue again: accepted, ErrTaskIDConflict, ErrDuplicateTask ("" when not asked)
	// Or: two copies at once reached several outcomes, these (the fields
	// above are then empty).
	Or []outcome
}

var errName = regexp.MustCompile(`\((Err\w+)\)`)

func (o outcome) String() string {
	if len(o.Or) > 0 {
		var all []string
		for _, x := range o.Or {
			all = append(all, x.String())
		}
		return fmt.Sprintf("%d states:\n%s", len(o.Or), strings.Join(all, "\n-- or --\n"))
	}
	return fmt.Sprintf("deliveries %v\nrows %v\nstate %s\nenqueued again: %s", o.Deliveries, o.Rows, o.State, o.Again)
}

var diffCases = []diffCase{
	{name: "success", order: 9812, opts: []asynq.Option{asynq.TaskID("t-9812")}, handler: once, token: "once"},
	{name: "success kept for Retention", order: 9812, opts: []asynq.Option{asynq.TaskID("t-9812"), asynq.Retention(time.Hour)}, handler: once, token: "once"},
	{name: "SkipRetry archives", order: 9813, opts: []asynq.Option{asynq.TaskID("t-9813")}, handler: unguarded, token: "once"},
	{name: "RevokeTask deletes", order: 9813, opts: []asynq.Option{asynq.TaskID("t-9813")}, handler: revoke, token: "once"},
	{name: "lease expired, redelivered", order: 9812, opts: []asynq.Option{asynq.TaskID("t-9812"), asynq.Queue("critical")}, handler: once, token: "crash@end"},
	{name: "lease expired, retried MaxRetry times, archived", order: 9812, opts: []asynq.Option{asynq.TaskID("t-9812"), asynq.MaxRetry(2)}, handler: keyed, token: "crash@end"},
	{name: "TaskID enqueued again after success", order: 9812, opts: []asynq.Option{asynq.TaskID("t-9812")}, handler: once, token: "duplicate-enqueue"},
	{name: "TaskID enqueued again within Retention", order: 9812, opts: []asynq.Option{asynq.TaskID("t-9812"), asynq.Retention(time.Hour)}, handler: once, token: "duplicate-enqueue"},
	{name: "TaskID enqueued again after SkipRetry", order: 9813, opts: []asynq.Option{asynq.TaskID("t-9813")}, handler: unguarded, token: "duplicate-enqueue"},
	{name: "TaskID enqueued again after RevokeTask", order: 9813, opts: []asynq.Option{asynq.TaskID("t-9813")}, handler: revoke, token: "duplicate-enqueue"},
	{name: "Unique enqueued again after success", order: 9812, opts: []asynq.Option{asynq.Unique(time.Hour)}, handler: unguarded, token: "duplicate-enqueue"},
	{name: "Unique enqueued again within Retention", order: 9812, opts: []asynq.Option{asynq.Unique(time.Hour), asynq.Retention(time.Hour)}, handler: once, token: "duplicate-enqueue"},
	{name: "Unique enqueued again after SkipRetry", order: 9813, opts: []asynq.Option{asynq.Unique(time.Hour)}, handler: unguarded, token: "duplicate-enqueue"},
	{name: "no TaskID enqueued again", order: 9812, handler: once, token: "duplicate-enqueue"},
	{name: "two copies at once, processed key on the task ID", order: 9812, handler: once, token: "duplicate-overlap"},
	{name: "two copies at once, processed key on the order", order: 9812, handler: perOrder, token: "duplicate-overlap"},
	{name: "two copies at once, check then act on the points", order: 9812, handler: checkThenAct, token: "duplicate-overlap"},
}

func once(p *pgxpool.Pool) asynq.Handler      { return rewardOnce(p) }
func unguarded(p *pgxpool.Pool) asynq.Handler { return reward(p) }
func revoke(p *pgxpool.Pool) asynq.Handler    { return revokeCancelled(p) }
func keyed(p *pgxpool.Pool) asynq.Handler     { return rewardKeyed(p) }
func perOrder(p *pgxpool.Pool) asynq.Handler  { return rewardPerOrder(p) }
func checkThenAct(p *pgxpool.Pool) asynq.Handler {
	return rewardIfNoPoints(p)
}

func TestModelAgreesWithAsynq(t *testing.T) {
	t.Parallel()
	ro := startRedis(t)
	cases := diffCases
	if revokeTask == nil {
		// An asynq before v0.25.0 has no RevokeTask: its cases cannot be
		// played, and the docs' table (every case) is checked on the
		// newer releases.
		cases = slices.DeleteFunc(slices.Clone(cases), func(c diffCase) bool { return strings.Contains(c.name, "RevokeTask") })
		t.Logf("this asynq has no RevokeTask: %d of %d cases, the docs' table unchecked", len(cases), len(diffCases))
	}
	engines := compareEach(t, cases, func(c diffCase) string { return c.name }, runModel,
		func(t *testing.T, c diffCase) outcome { return runAsynq(t, ro, c) })
	if engines != nil && len(cases) == len(diffCases) {
		docsblock.Check(t, "../docs/queues.md", "twiceasynq:observed", observedTable(diffCases, engines))
	}
}

// compareEach runs every case on the model and on asynq, as a subtest
// named by name, and fails each case they disagree on. It returns asynq's
// outcomes when every case ran and agreed: a -run that picked some cases
// cannot judge a whole table.
func compareEach[C any](t *testing.T, cases []C, name func(C) string, model, engine func(*testing.T, C) outcome) []outcome {
	t.Helper()
	engines := make([]outcome, len(cases))
	ran := 0
	for i, c := range cases {
		t.Run(name(c), func(t *testing.T) {
			ran++
			m := model(t, c)
			engines[i] = engine(t, c)
			if m.String() != engines[i].String() {
				t.Errorf("the model and asynq disagree on %q:\nmodel:\n%s\nasynq:\n%s", name(c), m, engines[i])
			}
		})
	}
	if t.Failed() || ran != len(cases) {
		return nil
	}
	return engines
}

// runModel plays the case's scenario under the check.
func runModel(t *testing.T, c diffCase) outcome {
	if c.token == "duplicate-overlap" {
		return modelDuplicates(t, c)
	}
	job := Job{Schema: schema, Seed: seed, Task: asynq.NewTask(rewardType, payload(c.order), c.opts...),
		Handler: func(a *twice.Attempt) asynq.Handler { return logged(a.Pool, c.handler(a.Pool)) }}
	q := newQueue(job)
	// The reference run's final state is the one left when the scenario
	// after it starts (job-1's first delivery).
	var before map[string]task
	fetch := func(ctx context.Context, db *pgxpool.Pool, d twice.Delivery) (string, error) {
		if d.JobID == "job-1" && d.Number == 1 {
			q.mu.Lock()
			before = map[string]task{}
			for _, st := range q.checks {
				for id, t := range st.tasks {
					before[id] = *t
				}
			}
			q.mu.Unlock()
		}
		return q.fetch(ctx, db, d)
	}
	token := c.token
	if token == "once" {
		token = "crash@1" // any scenario: the reference runs before it
	}
	rep := twice.Check(t.Context(), twice.Job{Name: c.name, Schema: schema, Seed: seed, Run: q.run},
		append(q.options(), twice.QueueBookkeeping(fetch, q.settle), twice.Only(token))...)
	if rep.Err != nil {
		t.Fatalf("the model's check: %v", rep.Err)
	}
	sr := rep.Reference
	for _, s := range rep.Scenarios {
		if s.Scenario.Token() == c.token {
			sr = s
		}
	}
	final := map[string]task{}
	q.mu.Lock()
	for _, st := range q.checks {
		for id, t := range st.tasks {
			final[id] = *t
		}
	}
	q.mu.Unlock()
	if c.token == "once" {
		final = before
	}
	var ids []string
	var o outcome
	if t1, ok := final["job-1"]; ok {
		ids = append(ids, t1.id)
		o.State = t1.state.String()
	}
	if t2, ok := final["job-2"]; ok {
		ids = append(ids, t2.id)
	}
	if c.token == "duplicate-enqueue" {
		o.Again = "accepted"
		for _, a := range sr.Attempts {
			if a.JobID == "job-2" && a.NotDelivered {
				o.Again = "refused: " + a.Note
				if m := errName.FindStringSubmatch(a.Note); m != nil {
					o.Again = m[1]
				}
			}
		}
	}
	o.Deliveries, o.Rows = rowsOf(sr.Snapshot, ids)
	return o
}

// runAsynq runs the case on a real asynq.Server.
func runAsynq(t *testing.T, ro *redis.Options, c diffCase) outcome {
	if c.token == "duplicate-overlap" {
		reached := map[string]outcome{}
		for _, s := range schedules() {
			o := runAsynqWith(t, ro, c, s(t))
			reached[o.String()] = o
		}
		return joinOutcomes(reached)
	}
	return runAsynqWith(t, ro, c, nil)
}

// runAsynqWith runs the case on a real asynq.Server; two copies at once
// under s for duplicate-overlap.
func runAsynqWith(t *testing.T, ro *redis.Options, c diffCase, s *schedule) outcome {
	ctx := t.Context()
	db, rc, client, inspector := engineWorld(t, ro)
	h := logged(db.Pool(), c.handler(db.Pool()))
	task := asynq.NewTask(rewardType, payload(c.order), c.opts...)

	var ids []string
	var o outcome
	if c.token == "duplicate-overlap" {
		ids, o.State = twoAtOnce(t, rc, client, inspector, task, h, s)
	} else if c.token == "crash@end" {
		ids = append(ids, crashAtEnd(t, ro, rc, client, task, h))
	} else {
		srv := newServer(rc)
		if err := srv.Start(h); err != nil {
			t.Fatal(err)
		}
		defer srv.Shutdown()
		info, err := client.Enqueue(task)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.ID)
		o.State = waitEnded(t, inspector, info.Queue, info.ID)
		if c.token == "duplicate-enqueue" {
			info2, err := client.Enqueue(task)
			switch {
			case errors.Is(err, asynq.ErrTaskIDConflict):
				o.Again = "ErrTaskIDConflict"
			case errors.Is(err, asynq.ErrDuplicateTask):
				o.Again = "ErrDuplicateTask"
			case err != nil:
				t.Fatal(err)
			default:
				o.Again = "accepted"
				ids = append(ids, info2.ID)
				waitEnded(t, inspector, info2.Queue, info2.ID)
			}
		}
	}
	if o.State == "" {
		o.State = stateOf(t, inspector, c.opts, ids[0])
	}
	// The check keeps the serial and identity columns in its snapshots
	// (compared up to renaming); the engine's side keeps them too.
	snap, err := db.Snapshot(ctx, pgfixture.GeneratedKeys())
	if err != nil {
		t.Fatal(err)
	}
	o.Deliveries, o.Rows = rowsOf(snap, ids)
	if c.token == "duplicate-overlap" {
		o.Deliveries = unnumbered(o.Deliveries)
	}
	return o
}

// engineWorld is a case's world on the engine's side: a database seeded
// as the check seeds it, and an empty Redis with asynq's client and
// inspector on it (closed when t ends).
func engineWorld(t *testing.T, ro *redis.Options) (*pgfixture.DB, *redis.Client, *asynq.Client, *asynq.Inspector) {
	ctx := t.Context()
	db := pgfixture.New(t, schema)
	if err := pgx.BeginFunc(ctx, db.Pool(), func(tx pgx.Tx) error { return seed(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(ro)
	t.Cleanup(func() { _ = rc.Close() })
	if err := rc.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	return db, rc, asynq.NewClient(sharedRedis(rc)), asynq.NewInspector(sharedRedis(rc))
}

func newServer(rc redis.UniversalClient) *asynq.Server { return newServerN(rc, 1) }

// newServerN is newServer with n workers.
func newServerN(rc redis.UniversalClient, n int) *asynq.Server {
	cfg := asynq.Config{
		Concurrency:              n,
		Queues:                   map[string]int{"default": 1, "critical": 1},
		DelayedTaskCheckInterval: 10 * time.Millisecond,
		RetryDelayFunc:           func(int, error, *asynq.Task) time.Duration { return 0 },
		ShutdownTimeout:          5 * time.Second,
		Logger:                   quiet{},
	}
	// TaskCheckInterval (asynq v0.25.0 on) polls an empty queue every 10
	// ms; older servers wait a second.
	if f := reflect.ValueOf(&cfg).Elem().FieldByName("TaskCheckInterval"); f.IsValid() {
		f.SetInt(int64(10 * time.Millisecond))
	}
	return asynq.NewServer(sharedRedis(rc), cfg)
}

// crashAtEnd runs the task on a first server whose worker dies once the
// handler returned, before its ack: its Redis connection is closed, so its
// heartbeat no longer extends the lease and its ack never arrives (its
// link to Redis is cut: closing its client would crash asynq's subscriber). The
// lease's expiry is then moved into the past in Redis (instead of waiting
// asynq's 30 s lease and its recoverer's 30 s cutoff), and a second server
// recovers the task as asynq does. It returns the task's ID.
func crashAtEnd(t *testing.T, ro *redis.Options, rc *redis.Client, client *asynq.Client, task *asynq.Task, h asynq.Handler) string {
	ctx := t.Context()
	died, release := make(chan struct{}), make(chan struct{})
	dying := asynq.HandlerFunc(func(ctx context.Context, task *asynq.Task) error {
		if n, _ := asynq.GetRetryCount(ctx); n > 0 {
			return h.ProcessTask(ctx, task)
		}
		err := h.ProcessTask(ctx, task)
		close(died)
		<-release
		return err
	})
	link := newRedisLink(t, ro.Addr)
	rcA := redis.NewClient(&redis.Options{Addr: link.Addr(), MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer rcA.Close()
	srvA := newServer(rcA)
	if err := srvA.Start(dying); err != nil {
		t.Fatal(err)
	}
	// Whatever happens below, the dying handler is let go and the first
	// server stopped (after the second, which the test stops first).
	var stopA sync.Once
	stopFirst := func() { stopA.Do(func() { close(release); srvA.Shutdown() }) }
	defer stopFirst()
	info, err := client.Enqueue(task)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-died:
	case <-time.After(20 * time.Second):
		t.Fatal("the first worker never got the task")
	}
	link.Cut()
	lease := "asynq:{" + info.Queue + "}:lease"
	if n, err := rc.ZAddXX(ctx, lease, redis.Z{Score: float64(time.Now().Add(-time.Hour).Unix()), Member: info.ID}).Result(); err != nil || n != 0 {
		t.Fatalf("moving the lease into the past: %d, %v", n, err)
	}
	if s, err := rc.ZScore(ctx, lease, info.ID).Result(); err != nil || s > float64(time.Now().Unix()) {
		t.Fatalf("the task holds no expired lease in %s: %v, %v", lease, s, err)
	}
	srvB := newServer(rc)
	if err := srvB.Start(dying); err != nil {
		t.Fatal(err)
	}
	var stopB sync.Once
	defer stopB.Do(srvB.Shutdown)
	waitEnded(t, asynq.NewInspector(sharedRedis(rc)), info.Queue, info.ID)
	stopB.Do(srvB.Shutdown)
	stopFirst()
	return info.ID
}

// waitEnded waits until asynq has finished with the task: deleted (gone),
// completed or archived; it returns that state.
func waitEnded(t *testing.T, in *asynq.Inspector, queue, id string) string {
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, err := in.GetTaskInfo(queue, id)
		switch {
		case errors.Is(err, asynq.ErrTaskNotFound), errors.Is(err, asynq.ErrQueueNotFound):
			return "deleted"
		case err != nil:
			t.Fatal(err)
		case info.State == asynq.TaskStateArchived || info.State == asynq.TaskStateCompleted:
			return info.State.String()
		}
		if time.Now().After(deadline) {
			t.Fatalf("asynq did not finish task %s within 20s (it is %s)", id, info.State)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func stateOf(t *testing.T, in *asynq.Inspector, opts []asynq.Option, id string) string {
	q := composeOptions(nil, opts).queue
	return waitEnded(t, in, q, id)
}

// rowsOf reads the deliveries (in order) and the other rows of a snapshot,
// with the task IDs written as ‹task N›: the model's IDs are not asynq's.
func rowsOf(s *pgfixture.Snapshot, ids []string) (deliveries, rows []string) {
	name := func(r pgfixture.Row) string {
		out := r.String()
		for i, id := range ids {
			out = strings.ReplaceAll(out, "'"+id+"'", fmt.Sprintf("‹task %d›", i+1))
		}
		return out
	}
	for _, r := range s.Rows("deliveries") {
		deliveries = append(deliveries, name(r))
	}
	slices.Sort(deliveries) // retry counts order them
	for _, table := range []string{"customers", "processed_tasks"} {
		for _, r := range s.Rows(table) {
			rows = append(rows, table+name(r))
		}
	}
	slices.Sort(rows)
	return deliveries, rows
}

// quiet is asynq's logger, silent: the suite reads what asynq did from
// Redis, not from its logs.
type quiet struct{}

func (quiet) Debug(...any) {}
func (quiet) Info(...any)  {}
func (quiet) Warn(...any)  {}
func (quiet) Error(...any) {}
func (quiet) Fatal(...any) {}

// TestRefusedWhileStored compares the model's refusals with asynq's client
// for a task enqueued again while the first is still pending (no server
// runs it).
func TestRefusedWhileStored(t *testing.T) {
	t.Parallel()
	ro := startRedis(t)
	for _, c := range []struct {
		name string
		opts []asynq.Option
	}{
		{"TaskID", []asynq.Option{asynq.TaskID("t-9812")}},
		{"Unique", []asynq.Option{asynq.Unique(time.Hour)}},
		{"TaskID and Unique", []asynq.Option{asynq.TaskID("t-9812"), asynq.Unique(time.Hour)}},
		{"neither", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			rc := redis.NewClient(ro)
			defer rc.Close()
			if err := rc.FlushAll(t.Context()).Err(); err != nil {
				t.Fatal(err)
			}
			client := asynq.NewClient(sharedRedis(rc))
			tk := asynq.NewTask(rewardType, payload(9812), c.opts...)
			if _, err := client.Enqueue(tk); err != nil {
				t.Fatal(err)
			}
			engine := "accepted"
			if _, err := client.Enqueue(tk); err != nil {
				engine = err.Error()
			}
			q := newQueue(Job{Task: tk})
			st := &checkState{tasks: map[string]*task{"job-1": {id: q.set.taskID, state: stateActive}}}
			model := "accepted"
			if why := q.refused(st); why != "" {
				model = why
			}
			if m := errName.FindStringSubmatch(model); m != nil {
				model = map[string]string{"ErrTaskIDConflict": asynq.ErrTaskIDConflict.Error(), "ErrDuplicateTask": asynq.ErrDuplicateTask.Error()}[m[1]]
			}
			if model != engine {
				t.Errorf("enqueued again while the first is pending: the model says %q, asynq %q", model, engine)
			}
		})
	}
}
