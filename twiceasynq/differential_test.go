package twiceasynq

import (
	"context"
	"errors"
	"fmt"
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
	// or duplicate-enqueue (the task enqueued again once the first ended).
	token string
}

// outcome is what one engine did with a case.
type outcome struct {
	Deliveries []string // (task, retry_count, max_retry, queue), in order
	Rows       []string // customers and processed_tasks
	State      string   // the first task's final state: deleted, completed, archived
	Again      string   // the enqueue again: accepted, ErrTaskIDConflict, ErrDuplicateTask ("" when not asked)
}

var errName = regexp.MustCompile(`\((Err\w+)\)`)

func (o outcome) String() string {
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
}

func once(p *pgxpool.Pool) asynq.Handler      { return rewardOnce(p) }
func unguarded(p *pgxpool.Pool) asynq.Handler { return reward(p) }
func revoke(p *pgxpool.Pool) asynq.Handler    { return revokeCancelled(p) }
func keyed(p *pgxpool.Pool) asynq.Handler     { return rewardKeyed(p) }

func TestModelAgreesWithAsynq(t *testing.T) {
	ro := startRedis(t)
	engines := make([]outcome, len(diffCases))
	for i, c := range diffCases {
		t.Run(c.name, func(t *testing.T) {
			model := runModel(t, c)
			engines[i] = runAsynq(t, ro, c)
			if model.String() != engines[i].String() {
				t.Errorf("the model and asynq disagree on %q:\nmodel:\n%s\nasynq:\n%s", c.name, model, engines[i])
			}
		})
	}
	if !t.Failed() {
		docsblock.Check(t, "../docs/queues.md", "twiceasynq:observed", observedTable(diffCases, engines))
	}
}

// runModel plays the case's scenario under the check.
func runModel(t *testing.T, c diffCase) outcome {
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
	ctx := t.Context()
	db := pgfixture.New(t, schema)
	if err := pgx.BeginFunc(ctx, db.Pool(), func(tx pgx.Tx) error { return seed(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(ro)
	defer rc.Close()
	if err := rc.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	h := logged(db.Pool(), c.handler(db.Pool()))
	client := asynq.NewClientFromRedisClient(rc)
	inspector := asynq.NewInspectorFromRedisClient(rc)
	task := asynq.NewTask(rewardType, payload(c.order), c.opts...)

	var ids []string
	var o outcome
	if c.token == "crash@end" {
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
	return o
}

func newServer(rc redis.UniversalClient) *asynq.Server {
	return asynq.NewServerFromRedisClient(rc, asynq.Config{
		Concurrency:              1,
		Queues:                   map[string]int{"default": 1, "critical": 1},
		TaskCheckInterval:        10 * time.Millisecond,
		DelayedTaskCheckInterval: 10 * time.Millisecond,
		RetryDelayFunc:           func(int, error, *asynq.Task) time.Duration { return 0 },
		ShutdownTimeout:          5 * time.Second,
		Logger:                   quiet{},
	})
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
	waitEnded(t, asynq.NewInspectorFromRedisClient(rc), info.Queue, info.ID)
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
			client := asynq.NewClientFromRedisClient(rc)
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
