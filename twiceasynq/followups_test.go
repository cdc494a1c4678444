package twiceasynq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/twice"
)

// Follow-ups: a handler that ships an order, then enqueues the order's
// reward as a task of its own through asynq's client (NewClient(a) under
// the check, a real *asynq.Client in the differential suite).

const shipType = "order:ship"

// enqueuer is the part of asynq's client the application's handler uses:
// *asynq.Client and *Client both have it.
type enqueuer interface {
	EnqueueContext(ctx context.Context, task *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error)
}

// ship marks the order shipped, then enqueues its reward with opts. When
// tolerant, a refused enqueue (the reward is already enqueued) counts as
// done, as asynq's docs advise for TaskID and Unique.
func ship(pool *pgxpool.Pool, client enqueuer, tolerant bool, opts ...asynq.Option) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		id, err := orderOf(t)
		if err != nil {
			return err
		}
		if _, err := pool.Exec(ctx, `UPDATE orders SET status = 'shipped' WHERE id = $1`, id); err != nil {
			return err
		}
		_, err = client.EnqueueContext(ctx, asynq.NewTask(rewardType, payload(id)), opts...)
		if tolerant && (errors.Is(err, asynq.ErrTaskIDConflict) || errors.Is(err, asynq.ErrDuplicateTask)) {
			return nil
		}
		return err
	}
}

// shipJob is the ship handler under the check, its reward worked by the
// mux's handler for rewardType (none when reward is nil).
func shipJob(tolerant bool, reward func(*pgxpool.Pool) asynq.Handler, opts ...asynq.Option) Job {
	return Job{
		Schema: schema, Seed: seed,
		Task: asynq.NewTask(shipType, payload(9812), asynq.TaskID("ship:9812")),
		Handler: func(a *twice.Attempt) asynq.Handler {
			return ship(a.Pool, NewClient(a), tolerant, opts...)
		},
		Mux: func(a *twice.Attempt) *asynq.ServeMux {
			mux := asynq.NewServeMux()
			mux.Handle(shipType, ship(a.Pool, NewClient(a), tolerant, opts...))
			if reward != nil {
				mux.Handle(rewardType, reward(a.Pool))
			}
			return mux
		},
	}
}

func points(t *testing.T, sr *twice.ScenarioRun) string {
	t.Helper()
	rows := sr.Snapshot.Rows("customers")
	if len(rows) != 1 {
		t.Fatalf("customers: %v", rows)
	}
	return rows[0].String()
}

// A reward enqueued under a TaskID derived from the order, whose handler
// keeps a processed key on the task ID: the follow-up is worked once in
// every scenario (a redelivery's enqueue is refused with
// ErrTaskIDConflict), and the world at rest has the points.
func TestAFollowUpUnderATaskIDIsWorkedOnce(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), shipJob(true, once, asynq.TaskID("reward:9812"), asynq.ProcessIn(30*time.Second)))
	if rep.Err != nil || !rep.OK() {
		t.Fatalf("want a pass:\n%s", rep)
	}
	if got, want := points(t, rep.Reference), "(id=77, points=50)"; got != want {
		t.Errorf("the reference run's customer is %s, want %s: the follow-up was not worked", got, want)
	}
	var jobs []string
	for _, a := range rep.Reference.Attempts {
		jobs = append(jobs, a.JobID)
	}
	if got := fmt.Sprint(jobs); got != "[job-1 follow-up-1]" {
		t.Errorf("the reference run's attempts are %s, want [job-1 follow-up-1]", got)
	}
}

// The same shipment enqueuing its reward without a TaskID, the reward
// unguarded: a redelivery after the enqueue enqueues a second reward, and
// both are worked. The report names the follow-ups and the enqueue made
// twice.
func TestAFollowUpEnqueuedTwiceIsFlagged(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), shipJob(false, unguarded), twice.Only("crash@end"))
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if got := fmt.Sprint(findings(rep)); got != "[crash@end]" {
		t.Fatalf("flagged by %s, want [crash@end]:\n%s", got, rep)
	}
	for _, want := range []string{
		"then the follow-ups it enqueued (follow-up-1: reward:order, follow-up-2: reward:order)",
		`asynq task reward:order "{\"order_id\":9812}": want 1, got 2 (exactly-once)`,
		"customers",
	} {
		if !strings.Contains(rep.String(), want) {
			t.Errorf("the report does not say %q:\n%s", want, rep)
		}
	}
}

// A Unique reward whose second enqueue is refused (ErrDuplicateTask) while
// the first waits: worked once, a pass, though its handler is unguarded.
func TestAUniqueFollowUpIsRefusedWhileItWaits(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), shipJob(true, unguarded, asynq.Unique(time.Hour)), twice.Only("crash@end"))
	if rep.Err != nil || !rep.OK() {
		t.Fatalf("want a pass:\n%s", rep)
	}
	if got, want := points(t, rep.Scenarios[0]), "(id=77, points=50)"; got != want {
		t.Errorf("crash@end left the customer at %s, want %s", got, want)
	}
}

// Without a handler for the reward's type in the mux, the reward stays
// enqueued: compared as an effect, never worked, and the report says so.
func TestAFollowUpTheMuxDoesNotRouteStaysEnqueued(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), shipJob(true, nil, asynq.TaskID("reward:9812")), twice.Only("crash@end"))
	if rep.Err != nil || !rep.OK() {
		t.Fatalf("want a pass:\n%s", rep)
	}
	if got, want := points(t, rep.Reference), "(id=77, points=0)"; got != want {
		t.Errorf("the reference run's customer is %s, want %s", got, want)
	}
	if want := "follow-ups not worked (no worker registered for their kind; compared as the queue holds them): reward:order"; !strings.Contains(rep.String(), want) {
		t.Errorf("the report does not say %q:\n%s", want, rep)
	}
}

// Without Mux, what the handler enqueues is compared, never worked: a
// second enqueue is a finding, the reward's handler never runs.
func TestWithoutAMuxTheEnqueueIsComparedOnly(t *testing.T) {
	t.Parallel()
	j := shipJob(false, once)
	j.Mux = nil
	rep := Check(t.Context(), j, twice.Only("crash@end"))
	if got := fmt.Sprint(findings(rep)); got != "[crash@end]" || rep.Err != nil {
		t.Fatalf("flagged by %s, want [crash@end]:\n%s", got, rep)
	}
	if got, want := points(t, rep.Reference), "(id=77, points=0)"; got != want {
		t.Errorf("the reference run's customer is %s, want %s: a follow-up was worked without a Mux", got, want)
	}
	if strings.Contains(rep.String(), "follow-up-1") {
		t.Errorf("the report names a follow-up:\n%s", rep)
	}
}

// NewClient outside a check's attempt says what to do.
func TestNewClientOutsideAnAttempt(t *testing.T) {
	t.Parallel()
	_, err := NewClient(&twice.Attempt{}).Enqueue(asynq.NewTask(rewardType, nil))
	want := "twiceasynq.NewClient: the attempt is not one twiceasynq is running: call NewClient(a) in Job.Handler or Job.Mux with the attempt they get"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

// A follow-up is delivered up to its own MaxRetry + 1, not the checked
// task's: the reward fails once and succeeds on its retry, though the
// ship task has MaxRetry(0).
func TestAFollowUpIsRetriedUnderItsOwnMaxRetry(t *testing.T) {
	t.Parallel()
	j := shipJob(true, failsFirst(once), asynq.TaskID("reward:9812"), asynq.MaxRetry(3))
	j.Task = asynq.NewTask(shipType, payload(9812), asynq.TaskID("ship:9812"), asynq.MaxRetry(0))
	rep := Check(t.Context(), j, twice.Only("crash@end"))
	if rep.Err != nil || len(rep.Reference.Problems) > 0 {
		t.Fatalf("the reference run is expected to work the reward on its retry:\n%s", rep)
	}
	var jobs []string
	for _, a := range rep.Reference.Attempts {
		jobs = append(jobs, a.JobID)
	}
	if got := fmt.Sprint(jobs); got != "[job-1 follow-up-1 follow-up-1]" {
		t.Errorf("the reference run's attempts are %s, want [job-1 follow-up-1 follow-up-1]", got)
	}
	if got, want := points(t, rep.Reference), "(id=77, points=50)"; got != want {
		t.Errorf("the reference run's customer is %s, want %s", got, want)
	}
}

// Follow-ups are worked in the order they are due: one enqueued for 20
// minutes later runs after one enqueued next for 10 minutes later.
func TestFollowUpsAreWorkedWhenDue(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var order []string
	note := func(typ string) asynq.HandlerFunc {
		return func(ctx context.Context, _ *asynq.Task) error {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, typ)
			return nil
		}
	}
	j := Job{Schema: schema, Seed: seed, Task: asynq.NewTask(shipType, payload(9812)),
		Handler: func(a *twice.Attempt) asynq.Handler {
			return asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
				c := NewClient(a)
				if _, err := c.EnqueueContext(ctx, asynq.NewTask("late", nil), asynq.ProcessIn(20*time.Minute)); err != nil {
					return err
				}
				_, err := c.EnqueueContext(ctx, asynq.NewTask("soon", nil), asynq.ProcessIn(10*time.Minute))
				return err
			})
		},
		Mux: func(a *twice.Attempt) *asynq.ServeMux {
			mux := asynq.NewServeMux()
			mux.Handle("late", note("late"))
			mux.Handle("soon", note("soon"))
			return mux
		}}
	rep := Check(t.Context(), j, twice.Only("crash@1"))
	if rep.Err != nil || !rep.OK() {
		t.Fatalf("want a pass:\n%s", rep)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := fmt.Sprint(order[:2]); got != "[soon late]" {
		t.Errorf("the reference run worked %s, want [soon late]", got)
	}
}

// A task enqueued into a Group says that the check does not play asynq's
// aggregation, and what to do.
func TestAGroupedFollowUpIsRefused(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), shipJob(false, once, asynq.Group("daily")), twice.Only("crash@1"))
	want := `twiceasynq: the check does not play asynq's task aggregation: reward:order was enqueued in Group("daily"); check the aggregated task's handler as a job of its own`
	if rep.Err != nil || !strings.Contains(rep.String(), want) {
		t.Fatalf("the report does not say %q:\n%s", want, rep)
	}
}

// Options asynq's client refuses are refused in its words.
func TestInvalidEnqueueOptionsAreRefused(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), shipJob(false, once, asynq.Unique(time.Millisecond)), twice.Only("crash@1"))
	if want := "Unique TTL cannot be less than 1s"; rep.Err != nil || !strings.Contains(rep.String(), want) {
		t.Fatalf("the report does not say %q:\n%s", want, rep)
	}
}

// The checked task's options asynq's client refuses fail the clean run,
// in asynq's words.
func TestInvalidTaskOptionsFailTheCheck(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, func(a *twice.Attempt) asynq.Handler { return rewardOnce(a.Pool) }, asynq.TaskID(" ")))
	want := "twiceasynq: asynq's client refuses the task's options (Job.Task and Job.Options): task ID cannot be empty"
	if rep.OK() || !strings.Contains(rep.String(), "the job failed on a clean run: "+want) {
		t.Fatalf("the report does not say %q:\n%s", want, rep)
	}
}
