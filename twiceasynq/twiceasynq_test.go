package twiceasynq

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/twicekit/twicekit/twice"
)

func findings(rep *twice.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Token)
	}
	return out
}

func job(orderID int64, h func(a *twice.Attempt) asynq.Handler, opts ...asynq.Option) Job {
	return Job{Schema: schema, Seed: seed, Task: asynq.NewTask(rewardType, payload(orderID), opts...), Handler: h}
}

// An unguarded increment is flagged where asynq's ack, in Redis after the
// handler returned, is lost or never sent, and by a duplicate enqueue; the
// headlines say so in asynq's words. Two copies of the task at once (asynq
// runs distinct tasks on its workers at once) add the points twice too.
func TestUnguardedIncrementIsFlaggedInAsynqWords(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, func(a *twice.Attempt) asynq.Handler { return reward(a.Pool) }))
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if got := fmt.Sprint(findings(rep)); got != "[sequential crash@end duplicate-enqueue duplicate-overlap@1]" {
		t.Fatalf("flagged by %s, want [sequential crash@end duplicate-enqueue duplicate-overlap@1]:\n%s", got, rep)
	}
	for _, want := range []string{"asynq's ack in Redis was lost", "before asynq acked the task in Redis", "asynq gave the copy another task ID"} {
		if !strings.Contains(rep.String(), want) {
			t.Errorf("the report does not say %q:\n%s", want, rep)
		}
	}
}

// The "processed tasks" key on asynq.GetTaskID, with a TaskID derived from
// the order: every scenario passes, the duplicate enqueue too (asynq gives
// it the same task ID).
func TestProcessedKeyOnTaskIDPasses(t *testing.T) {
	t.Parallel()
	AssertIdempotent(t, job(9812, func(a *twice.Attempt) asynq.Handler { return rewardOnce(a.Pool) }, asynq.TaskID("reward:9812")))
}

// The same handler, enqueued without a TaskID: asynq gives the duplicate
// another ID, so the key does not catch it, whether the copies run one
// after the other or at once.
func TestProcessedKeyWithoutTaskIDIsFlaggedByADuplicateEnqueue(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, func(a *twice.Attempt) asynq.Handler { return rewardOnce(a.Pool) }))
	if got := fmt.Sprint(findings(rep)); got != "[duplicate-enqueue duplicate-overlap@1]" || rep.Err != nil {
		t.Fatalf("flagged by %s, want [duplicate-enqueue duplicate-overlap@1]:\n%s", got, rep)
	}
}

// Unique(ttl) does not help once the first task succeeded: asynq releases
// the lock then, and accepts the duplicate. While the first copy runs the
// lock holds, so two copies never run at once.
func TestUniqueIsReleasedWhenTheTaskSucceeds(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, func(a *twice.Attempt) asynq.Handler { return rewardOnce(a.Pool) }, asynq.Unique(time.Hour)))
	if got := fmt.Sprint(findings(rep)); got != "[duplicate-enqueue]" || rep.Err != nil {
		t.Fatalf("flagged by %s, want [duplicate-enqueue]:\n%s", got, rep)
	}
	if !slices.Contains(rep.Tokens(), "duplicate-overlap@1") {
		t.Errorf("the concurrent duplicate did not play: %v", rep.Tokens())
	}
}

// With Retention, the succeeded task stays stored: asynq refuses a
// duplicate TaskID, so the unguarded increment is flagged only where the
// ack is lost.
func TestRetentionRefusesTheDuplicateTaskID(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, func(a *twice.Attempt) asynq.Handler { return reward(a.Pool) },
		asynq.TaskID("reward:9812"), asynq.Retention(time.Hour)))
	if got := fmt.Sprint(findings(rep)); got != "[sequential crash@end]" || rep.Err != nil {
		t.Fatalf("flagged by %s, want [sequential crash@end]:\n%s", got, rep)
	}
	dup := scenario(rep, "duplicate-enqueue")
	if dup == nil || len(dup.Attempts) != 2 || !dup.Attempts[1].NotDelivered || !strings.Contains(dup.Attempts[1].Note, "ErrTaskIDConflict") {
		t.Fatalf("the duplicate enqueue was not refused with ErrTaskIDConflict:\n%s", rep)
	}
}

func scenario(rep *twice.Report, token string) *twice.ScenarioRun {
	for _, s := range rep.Scenarios {
		if s.Scenario.Token() == token {
			return s
		}
	}
	return nil
}

// SkipRetry on the clean run ends the task: it passes, delivered once.
func TestSkipRetryEndsTheTask(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9813, func(a *twice.Attempt) asynq.Handler { return reward(a.Pool) }))
	if !rep.OK() {
		t.Fatalf("SkipRetry was not an end:\n%s", rep)
	}
	if n := len(rep.Reference.Attempts); n != 1 || !rep.Reference.Attempts[0].Terminal {
		t.Fatalf("the clean run made %d deliveries (want 1, terminal):\n%s", n, rep)
	}
}

// RevokeTask ends the task too.
func TestRevokeTaskEndsTheTask(t *testing.T) {
	t.Parallel()
	if revokeTask == nil {
		t.Skip("this asynq has no RevokeTask (it came with v0.25.0)")
	}
	rep := Check(t.Context(), job(9813, func(a *twice.Attempt) asynq.Handler { return revokeCancelled(a.Pool) }))
	if !rep.OK() || len(rep.Reference.Attempts) != 1 {
		t.Fatalf("RevokeTask was not an end:\n%s", rep)
	}
}

// A key written without ON CONFLICT: after a crash past the commit, every
// redelivery fails on the key; asynq retries it MaxRetry times and archives
// it. rewardOnce (ON CONFLICT DO NOTHING) is its fixed twin.
func TestMaxRetryThenArchived(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, func(a *twice.Attempt) asynq.Handler { return rewardKeyed(a.Pool) }, asynq.MaxRetry(2), asynq.TaskID("reward:9812")))
	if got := fmt.Sprint(findings(rep)); got != "[crash@end duplicate-enqueue]" || rep.Err != nil {
		t.Fatalf("flagged by %s, want [sequential crash@end]:\n%s", got, rep)
	}
	if s := scenario(rep, "crash@end"); s == nil || len(s.Attempts) != 3 {
		t.Fatalf("want 3 deliveries (MaxRetry 2) after the crash:\n%s", rep)
	}
}

// A job without a task or handler gets an error that says what to set.
func TestMissingTaskOrHandlerSaysWhatToSet(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		job  Job
		want string
	}{
		{Job{Schema: schema, Handler: func(a *twice.Attempt) asynq.Handler { return reward(a.Pool) }}, "set Job.Task"},
		{Job{Schema: schema, Task: asynq.NewTask(rewardType, payload(9812))}, "set Job.Handler"},
	} {
		rep := Check(t.Context(), c.job)
		if rep.OK() || !strings.Contains(rep.String(), c.want) {
			t.Errorf("want a report saying %q, got:\n%s", c.want, rep)
		}
	}
}

// The options given to asynq.NewTask are read (asynq hides them): this
// fails if an asynq upgrade keeps them otherwise.
func TestTaskOptionsAreRead(t *testing.T) {
	t.Parallel()
	s := composeOptions(asynq.NewTask("x", nil, asynq.MaxRetry(3), asynq.Queue("critical"), asynq.TaskID("a")), []asynq.Option{asynq.TaskID("b")})
	if s.maxRetry != 3 || s.queue != "critical" || s.taskID != "b" || s.timeout != defaultTimeout {
		t.Fatalf("composed %+v", s)
	}
}
