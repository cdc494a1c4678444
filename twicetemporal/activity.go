package twicetemporal

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// Activity is a Temporal activity under a check: the function Temporal
// would run, its input, its options, the application's schema and the data
// every scenario starts from.
type Activity struct {
	// Name names the activity in reports; it defaults to the activity
	// function's name.
	Name string
	// Schema is the application's schema.
	Schema pgfixture.Schema
	// Seed inserts the data every scenario starts from (see twice.Job.Seed).
	Seed func(ctx context.Context, tx pgx.Tx) error
	// Activity returns the activity for one attempt, built on the attempt's
	// handles (a.Pool, a.HTTP, a.Mailer): a function or a method value whose
	// first parameter is a context.Context, as Temporal registers it.
	Activity func(a *twice.Attempt) any
	// Args are the activity's arguments after its context, encoded and
	// decoded by Temporal's default data converter as a worker would.
	Args []any
	// Options are the activity's options as its workflow sets them: the
	// timeouts, the ActivityID and the RetryPolicy (MaximumAttempts,
	// NonRetryableErrorTypes). StartToCloseTimeout defaults to ten minutes,
	// the SDK test environment's.
	Options workflow.ActivityOptions
	// WorkflowID is the ID of the workflow that scheduled the activity, as
	// activity.GetInfo reports it; it defaults to the SDK test environment's
	// ("default-test-workflow-id").
	WorkflowID string
	// Schedule is the spec of the Temporal Schedule that starts the
	// activity's workflow, or nil. Its next run (a new workflow, with the
	// same input) is played after every scenario at the spec's next time on
	// the check's clock (twice.PeriodicSchedule); an activity whose
	// retries ran out (MaximumAttempts) is then no finding when the next
	// run succeeds. Only Intervals (with Offset and StartAt) are read; the
	// next run's workflow ID is WorkflowID with the scheduled time
	// appended, as Temporal names a scheduled workflow.
	Schedule *client.ScheduleSpec
}

// defaultStartToClose is the SDK test environment's StartToCloseTimeout.
const defaultStartToClose = 10 * time.Minute

// startToClose is how long one attempt may run (its context's deadline).
func (act Activity) startToClose() time.Duration {
	d := cmp.Or(act.Options.StartToCloseTimeout, defaultStartToClose)
	if s := act.Options.ScheduleToCloseTimeout; s > 0 && s < d {
		d = s
	}
	return d
}

// overlapsOff says why Temporal cannot run two attempts of the activity at
// once, or "". The server retries an attempt that timed out; an attempt
// that timed out on its StartToCloseTimeout has had its context end at the
// same moment (the worker computes the deadline from the same start), so
// it can commit nothing after the retry begins. Only a HeartbeatTimeout
// shorter than that lets the server retry an attempt whose context is still
// alive.
func (act Activity) overlapsOff() string {
	hb, stc := act.Options.HeartbeatTimeout, act.startToClose()
	if hb > 0 && hb < stc {
		return ""
	}
	return fmt.Sprintf("Temporal retries an attempt that timed out on its StartToCloseTimeout (%s) when the attempt's own context ends too; set a HeartbeatTimeout shorter than it to check two attempts at once", stc)
}

// name is the activity's name in reports.
func (act Activity) name() string {
	if act.Name != "" {
		return act.Name
	}
	fn, _ := act.build(nil)
	if fn == nil {
		return "activity"
	}
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func {
		return "activity"
	}
	full := runtime.FuncForPC(v.Pointer()).Name()
	full = strings.TrimSuffix(full, "-fm")
	if i := strings.LastIndex(full, "/"); i >= 0 {
		full = full[i+1:]
	}
	if i := strings.Index(full, "."); i >= 0 {
		full = full[i+1:]
	}
	return cmp.Or(full, "activity")
}

// build calls Activity for attempt a (a zero attempt when nil). ok is
// false when Activity panicked: it needs a real attempt.
func (act Activity) build(a *twice.Attempt) (fn any, ok bool) {
	if act.Activity == nil {
		return nil, true
	}
	if a == nil {
		a = &twice.Attempt{}
	}
	defer func() {
		if recover() != nil {
			fn, ok = nil, false
		}
	}()
	return act.Activity(a), true
}

// Check checks the activity as Temporal runs it and returns the report; it
// never fails a test. It plays every scenario with retries resuming from
// the last heartbeat that reached the server, then, when the activity
// heartbeats, again with retries resuming from each older one (the later
// ones throttled or lost with the worker); it returns the first report
// with a finding, else the first. opts are twice's options, applied after
// Temporal's semantics.
func Check(ctx context.Context, act Activity, opts ...twice.Option) *twice.Report {
	if err := act.problem(); err != nil {
		return &twice.Report{Job: act.name(), Err: err}
	}
	q := newQueue(act, 0)
	rep := twice.Check(ctx, q.job(), append(q.options(), opts...)...)
	if !rep.OK() {
		return rep
	}
	for lag := 1; lag <= q.heartbeatsSeen(); lag++ {
		ql := newQueue(act, lag)
		if r := twice.Check(ctx, ql.job(), append(ql.options(), opts...)...); !r.OK() {
			return r
		}
	}
	return rep
}

// AssertIdempotent is twice.AssertIdempotent for a Temporal activity: it
// stops the test (Fatalf) with the report when the activity breaks a
// promise, from the last heartbeat or from an older one.
func AssertIdempotent(tb twice.TB, act Activity, opts ...twice.Option) {
	tb.Helper()
	assert(tb, act, opts, func(j twice.Job, o []twice.Option) bool {
		tb.Helper()
		return twice.ExpectIdempotent(fatal{tb}, j, o...)
	})
}

// ExpectIdempotent is AssertIdempotent that lets the test go on (Errorf);
// it reports whether the activity kept every promise.
func ExpectIdempotent(tb twice.TB, act Activity, opts ...twice.Option) bool {
	tb.Helper()
	return assert(tb, act, opts, func(j twice.Job, o []twice.Option) bool {
		tb.Helper()
		return twice.ExpectIdempotent(tb, j, o...)
	})
}

// fatal is a TB whose Errorf is its Fatalf: twice.ExpectIdempotent through
// it stops the test as twice.AssertIdempotent does, and says whether the
// check passed (for a TB whose Fatalf returns).
type fatal struct{ twice.TB }

func (f fatal) Errorf(format string, args ...any) {
	f.TB.Helper()
	f.Fatalf(format, args...)
}

// assert plays the check at every heartbeat lag with one of twice's
// assertions, stopping at the first that fails.
func assert(tb twice.TB, act Activity, opts []twice.Option, check func(twice.Job, []twice.Option) bool) bool {
	tb.Helper()
	if err := act.problem(); err != nil {
		tb.Fatalf("%v", err)
		return false
	}
	q := newQueue(act, 0)
	if !check(q.job(), append(q.options(), opts...)) {
		return false
	}
	for lag := 1; lag <= q.heartbeatsSeen(); lag++ {
		ql := newQueue(act, lag)
		if !check(ql.job(), append(ql.options(), opts...)) {
			return false
		}
	}
	return true
}

// Twice returns the activity as twice sees it and Temporal's semantics as
// twice options, for twice.Check or a rapid property: retries resume from
// the last heartbeat that reached the server (Check and AssertIdempotent
// also play the older ones). The job may be checked any number of times,
// in parallel too.
func (act Activity) Twice() (twice.Job, []twice.Option) {
	q := newQueue(act, 0)
	return q.job(), q.options()
}
