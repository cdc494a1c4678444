// Package twicetemporal checks a Temporal activity (go.temporal.io/sdk) as
// Temporal runs it, with Temporal's own delivery semantics.
//
//	func TestSettleBatch(t *testing.T) {
//		twicetemporal.AssertIdempotent(t, twicetemporal.Activity{Schema: batch.Schema, Seed: batch.Seed, Args: []any{batch.Tonight},
//			Activity: func(a *twice.Attempt) any { return (&batch.Settler{Pool: a.Pool}).SettleBatch },
//			Options:  workflow.ActivityOptions{StartToCloseTimeout: time.Minute, HeartbeatTimeout: 10 * time.Second}})
//	}
//
// Each attempt runs through the SDK's own activity test environment
// (testsuite.TestActivityEnvironment), with the attempt's context as the
// worker's background context, so activity.GetInfo, RecordHeartbeat,
// HasHeartbeatDetails, GetHeartbeatDetails and GetLogger work as in
// production. A worker interceptor tells each attempt what the server would:
// its attempt number, the workflow and activity IDs, the timeouts.
//
// Temporal's semantics, as twice options (see twice.TerminalError and the
// others): the completion reported after the activity returns is the ack,
// never committed in the activity's transaction, so a crash after the work
// and before it runs the activity again. An error is retried unless it is
// non-retryable (temporal.NewNonRetryableApplicationError, or its type in
// the RetryPolicy's NonRetryableErrorTypes), up to MaximumAttempts. Two
// attempts at once are Temporal retrying an attempt that missed its
// HeartbeatTimeout while it still runs: checked only when the
// HeartbeatTimeout is shorter than the StartToCloseTimeout, since an
// attempt that timed out on its StartToCloseTimeout has its context end as
// the server retries it. Temporal never schedules the same activity twice,
// so the duplicate-enqueue scenario is left out.
//
// Heartbeats are points: each activity.RecordHeartbeat is a point named
// "RecordHeartbeat N" (the attempt's Nth) that a scenario can crash before
// (the heartbeat is lost with the worker) or after (it reached the server).
// A retry resumes from the details of the last heartbeat that reached the
// server; [Check], [AssertIdempotent] and [ExpectIdempotent] then play the
// whole check again with retries resuming from each older heartbeat (the
// later ones throttled, or lost with the worker), once per heartbeat an
// attempt recorded. The server's heartbeats are kept in the table
// twicetemporal.heartbeat, outside the compared schema.
//
// Index:
//   - [Activity]: the activity, its arguments and options, the schema and
//     seed.
//   - [Check] (the report), [AssertIdempotent] (Fatalf), [ExpectIdempotent]
//     (Errorf).
//   - [Activity.Twice]: the twice.Job and Temporal's semantics as twice
//     options, for twice.Check or a rapid property (retries from the last
//     heartbeat only).
//
// Versions: Temporal SDK v1.35.0 to v1.51.0 (v1.34.0 lacks
// activity.Info's StartToCloseTimeout and ScheduleToCloseTimeout). This is
// a module of its own (github.com/twicekit/twicekit/twicetemporal), so that
// the SDK's dependencies (gRPC, protobuf) reach only those who import it:
// its go.mod requires SDK v1.35.0, the oldest release whose API it uses, so
// adding it never raises an app's SDK; go.newest.mod requires v1.51.0, and
// CI runs the tests on both.
//
// The story twicetemporal/examples/batch is a settlement batch with
// heartbeat checkpoints and a card charge, broken and fixed.
package twicetemporal
