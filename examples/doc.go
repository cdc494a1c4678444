// Package examples is the index of twicekit's examples: the jobs of the
// source documents ("Jobs that can run twice" and "Why background jobs
// sometimes run twice"), each in its broken and fixed forms, written as
// ordinary Go against the handles of a *twice.Attempt, with tests that say
// what the check finds in each.
//
// Run them all, with a verdict per job:
//
//	go run ./examples/tour
//
// The stories, one package each (schema.sql, the job's forms, tests and
// examples):
//
//   - [github.com/twicekit/twicekit/examples/loyalty]: "add 50 points"; check-then-act
//     in application code, alone and in a transaction (caught only by two
//     deliveries at once; SERIALIZABLE fixes it); the ledger with a unique
//     constraint and the ON CONFLICT CTE.
//   - [github.com/twicekit/twicekit/examples/receipt]: send-then-mark
//     (at-least-once) and mark-then-send (at-most-once), each declared with
//     the policy it implements.
//   - [github.com/twicekit/twicekit/examples/invoice]: the second document's
//     guarded conditional update, against the same job without its guard;
//     now() normalised with twice.Normalize.
//   - [github.com/twicekit/twicekit/examples/payout]: a restaurant payout
//     through an Idempotency-Key provider: a random key against a key from
//     the job; a late redrive past the provider's key window.
//   - [github.com/twicekit/twicekit/examples/refund]: a refund with the real
//     stripe-go client pointed at the fake provider: stripe-go's own key
//     (new on every call) against a key from the job.
//   - [github.com/twicekit/twicekit/examples/orderstatus]: "advance to the
//     next status" against "make it delivered".
//   - [github.com/twicekit/twicekit/examples/processedjobs]: a processed_jobs
//     table keyed by job ID (safe for redelivery, flagged by a duplicate
//     enqueue), keyed by the order instead, or with
//     twice.WithoutDuplicateEnqueue and the reason.
//   - [github.com/twicekit/twicekit/examples/storedresults]: an amount
//     computed from the clock at run time against one stored first.
//   - [github.com/twicekit/twicekit/examples/riverjobs]: the loyalty reward
//     and the invoice email as River workers, checked with package
//     twiceriver: completed by River after Work, completed in the work's
//     transaction (river.JobCompleteTx), a follow-up job inserted outside
//     it, river.JobCancel.
//   - [github.com/twicekit/twicekit/examples/otherqueues]: a real asynq
//     handler (twiceasynq), a real gue work function (twicegue) and the
//     application's own jobs table (twice's queue options), each broken
//     and fixed (docs/queues.md's blocks).
//   - [github.com/twicekit/twicekit/examples/quickstart]: the README's quick
//     start, compiled and run as a test.
//
// Every test package starts with
//
//	func TestMain(m *testing.M) { os.Exit(pgfixture.Main(m)) }
//
// so the PostgreSQL the checks start is stopped when the tests end.
package examples
