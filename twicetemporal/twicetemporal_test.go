package twicetemporal_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twicetemporal"
)

func check(t *testing.T, act twicetemporal.Activity, opts ...twice.Option) *twice.Report {
	t.Helper()
	rep := twicetemporal.Check(t.Context(), act, opts...)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	return rep
}

// headlines lists the report's findings, one token and headline a line.
func headlines(rep *twice.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		b.WriteString(f.Token + ": " + f.Headline + "\n")
	}
	return b.String()
}

var input = []any{BatchInput{Batch: 7, Items: []int{1, 2, 3}}}

func TestUnkeyedIncrementIsFlaggedInTemporalsWords(t *testing.T) {
	t.Parallel()
	rep := check(t, twicetemporal.Activity{Schema: schema, Seed: seed, Args: []any{1},
		Activity: func(a *twice.Attempt) any { return (&Counter{Pool: a.Pool}).Add }})
	if rep.OK() {
		t.Fatal("an unkeyed increment passed")
	}
	h := headlines(rep)
	t.Log(h)
	for _, want := range []string{"crash@end: ", "the worker died before reporting its completion, and the attempt timed out (StartToCloseTimeout 10m0s) and Temporal retried it"} {
		if !strings.Contains(h, want) {
			t.Errorf("headlines lack %q:\n%s", want, h)
		}
	}
}

func batchActivity(b Batch) twicetemporal.Activity {
	return twicetemporal.Activity{Schema: schema, Seed: seed, Args: input,
		Activity: func(a *twice.Attempt) any { b.Pool = a.Pool; return b.Apply }}
}

// A heartbeat after each unkeyed item's commit: a crash between the commit
// and the heartbeat sends the retry back to the checkpoint before, and the
// item is added again.
func TestHeartbeatAfterUnkeyedCommitIsFlagged(t *testing.T) {
	t.Parallel()
	rep := check(t, batchActivity(Batch{}))
	h := headlines(rep)
	t.Log(h)
	if !strings.Contains(h, "(point RecordHeartbeat 1): the worker died, the attempt timed out (StartToCloseTimeout 10m0s) and Temporal retried it from the last heartbeat that reached the server") {
		t.Errorf("no finding before heartbeat 1:\n%s", h)
	}
}

// The same batch with keyed items passes, from every checkpoint.
func TestKeyedItemsPass(t *testing.T) {
	t.Parallel()
	rep := check(t, batchActivity(Batch{Keyed: true}))
	if !rep.OK() {
		t.Fatal(rep)
	}
}

// A heartbeat recorded before the item's commit: a crash after it, before
// the commit, lets the retry skip the item.
func TestHeartbeatBeforeCommitIsFlagged(t *testing.T) {
	t.Parallel()
	rep := check(t, batchActivity(Batch{Keyed: true, HeartbeatFirst: true}))
	h := headlines(rep)
	t.Log(h)
	if !strings.Contains(h, "(begin): the worker died") {
		t.Errorf("no finding before an item's BEGIN:\n%s", h)
	}
}

// A retry from an older checkpoint: a guard that covers only the item whose
// heartbeat was the last one lost passes when retries resume from the last
// heartbeat that reached the server, and breaks when the one before it was
// lost too (throttled); the guard that covers every item passes from every
// checkpoint.
func TestOlderCheckpointsArePlayed(t *testing.T) {
	t.Parallel()
	guardLast := batchActivity(Batch{GuardLast: true})
	job, opts := guardLast.Twice()
	if rep := twice.Check(t.Context(), job, opts...); !rep.OK() {
		t.Fatalf("from the last checkpoint, the guard of the last item holds:\n%s", rep)
	}
	rep := check(t, guardLast)
	h := headlines(rep)
	t.Log(h)
	if !strings.Contains(h, "Temporal retried it from the heartbeat before the last (the last one throttled or lost with the worker)") {
		t.Errorf("no finding from the checkpoint before the last:\n%s", h)
	}
	if rep := check(t, batchActivity(Batch{GuardAll: true})); !rep.OK() {
		t.Fatal(rep)
	}
}

// A non-retryable error on the clean run ends the activity: it passes,
// whether the error says so itself or its type is in the retry policy's
// NonRetryableErrorTypes. A retryable one is retried until Temporal gives
// up: the clean run fails.
func TestNonRetryableErrorOnTheCleanRunPasses(t *testing.T) {
	t.Parallel()
	refuse := func(r Refuser, policy *temporal.RetryPolicy) twicetemporal.Activity {
		return twicetemporal.Activity{Schema: schema, Seed: seed, Args: []any{1},
			Activity: func(a *twice.Attempt) any { r.Pool = a.Pool; return r.Refuse },
			Options:  workflow.ActivityOptions{RetryPolicy: policy}}
	}
	if rep := check(t, refuse(Refuser{NonRetryable: true}, nil)); !rep.OK() {
		t.Errorf("NewNonRetryableApplicationError:\n%s", rep)
	}
	if rep := check(t, refuse(Refuser{Type: "Closed"}, &temporal.RetryPolicy{NonRetryableErrorTypes: []string{"Closed"}})); !rep.OK() {
		t.Errorf("NonRetryableErrorTypes:\n%s", rep)
	}
	rep := check(t, refuse(Refuser{Type: "Closed"}, &temporal.RetryPolicy{MaximumAttempts: 3}))
	if rep.OK() {
		t.Fatal("a retryable error on the clean run passed")
	}
	if s := rep.String(); !strings.Contains(s, "counter 1 is closed") {
		t.Errorf("the report does not show the error:\n%s", s)
	}
}

// activity.GetInfo tells each attempt its number, its workflow and activity
// IDs and its timeouts, as Temporal's server would.
func TestInfoIsTheAttempts(t *testing.T) {
	t.Parallel()
	var log InfoLog
	rep := check(t, twicetemporal.Activity{Schema: schema, Seed: seed, Args: []any{1}, WorkflowID: "order-9812",
		Activity: func(a *twice.Attempt) any { return (&Observed{Pool: a.Pool, Log: &log}).Add },
		Options:  workflow.ActivityOptions{ActivityID: "charge", StartToCloseTimeout: time.Minute}},
		twice.Only("crash@1"))
	if !rep.OK() {
		t.Fatal(rep)
	}
	var got []string
	for _, i := range log.Seen() {
		got = append(got, fmt.Sprintf("%s/%s attempt %d %s %s", i.WorkflowExecution.ID, i.ActivityID, i.Attempt, i.StartToCloseTimeout, i.ActivityType.Name))
	}
	want := "order-9812/charge attempt 2 1m0s Add"
	if len(got) == 0 || got[len(got)-1] != want {
		t.Errorf("infos %q, want the last to be %q", got, want)
	}
}

// With a HeartbeatTimeout shorter than its StartToCloseTimeout, Temporal
// may retry an attempt whose context is still alive: the unkeyed increment
// is flagged by two attempts at once too.
func TestHeartbeatTimeoutOverlaps(t *testing.T) {
	t.Parallel()
	rep := check(t, twicetemporal.Activity{Schema: schema, Seed: seed, Args: []any{1},
		Activity: func(a *twice.Attempt) any { return (&Counter{Pool: a.Pool}).Add },
		Options:  workflow.ActivityOptions{StartToCloseTimeout: time.Minute, HeartbeatTimeout: 10 * time.Second}})
	h := headlines(rep)
	// One autocommit statement is two points at once (its implicit commit),
	// so the overlap after the statement finds it.
	if !strings.Contains(h, "overlap@1: not idempotent: overlap after point 1 of 2: the attempt missed its HeartbeatTimeout (10s) while still running, Temporal retried it on another worker") {
		t.Errorf("no concurrent finding:\n%s", h)
	}
}

// The same activity gives the same report, to the byte, from every
// checkpoint.
func TestReportsAreDeterministic(t *testing.T) {
	t.Parallel()
	act := batchActivity(Batch{GuardLast: true})
	first := check(t, act).String()
	if first == "" || !strings.Contains(first, "heartbeat before the last") {
		t.Fatalf("the report is not the older checkpoint's:\n%s", first)
	}
	for range 2 {
		if again := check(t, act).String(); again != first {
			t.Fatalf("two checks of the same activity differ:\n%s\n---\n%s", first, again)
		}
	}
}

// Temporal retries an error up to the retry policy's MaximumAttempts, then
// gives up: a retry that always fails is reported after that many attempts.
func TestMaximumAttempts(t *testing.T) {
	t.Parallel()
	rep := check(t, twicetemporal.Activity{Schema: schema, Seed: seed, Args: []any{1},
		Activity: func(a *twice.Attempt) any { return (&Refuser{Pool: a.Pool, Type: "Closed", OnRetry: true}).Refuse },
		Options:  workflow.ActivityOptions{RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}}},
		twice.Only("crash@end"))
	if s := rep.String(); !strings.Contains(s, "gave up after 3 deliveries") {
		t.Errorf("the report does not give up after MaximumAttempts:\n%s", s)
	}
}

// A retry reads the details of the heartbeat that reached the server,
// through Temporal's default data converter: what JSON does not carry (an
// unexported field) is lost, as in production.
func TestHeartbeatDetailsGoThroughTheDataConverter(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []Progress
	rep := check(t, twicetemporal.Activity{Schema: schema, Seed: seed, Args: []any{1},
		Activity: func(a *twice.Attempt) any { return (&Resumer{Pool: a.Pool, Seen: &seen, mu: &mu}).Run }},
		twice.Only("crash@end"))
	if !rep.OK() {
		t.Fatal(rep)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(seen) != "[{2 }]" {
		t.Errorf("the retry resumed from %v, want [{2 }] (Done kept, note lost)", seen)
	}
}
