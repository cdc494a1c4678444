// Package twice checks that a background job is safe to run more than once.
//
// An at-least-once queue delivers a job again when its worker crashed after
// the work and before the ack, when the ack was lost, when the producer
// enqueued it twice, or when a human redrives it. Check plays that queue
// against a real PostgreSQL: it runs the job once on a fresh database as the
// reference, then in every scenario, and compares each scenario's rows and
// external effects with the reference.
//
//	func TestRewardOrder(t *testing.T) {
//	    twice.AssertIdempotent(t, rewardOrderJob(9812))
//	}
//
// Index:
//   - [Job], [Attempt], [SeedSQL]: the job under test and what one delivery gets.
//   - Effects: [Attempt.Effect] performs and records an effect of any kind
//     (an SMS, a published message) with every effect scenario; Attempt.HTTP
//     routes by host to the Stripe-dialect provider at Attempt.Payments and
//     to the fakes mounted with [HTTPHost]; Attempt.Mailer and
//     Attempt.Webhooks are users of the same API.
//   - [Check]: the pure check; it returns a [Report] and never fails a test.
//   - [AssertIdempotent] (Fatalf) and [ExpectIdempotent] (Errorf): the same
//     check for tests, through the small [TB] interface.
//   - [Scenario], [ScenarioKind]: once, sequential (ack lost), crash before
//     each point, crash after the last point, duplicate enqueue.
//   - [Report], [Finding]: what broke, with the timeline, the database diff,
//     the effects diff and the one line that replays it.
//   - Values that differ between two clean runs: the reference runs twice;
//     a column or effect word whose values differ between the two runs (now(),
//     gen_random_uuid(), time.Now()) is compared by shape (NULL or not, equal
//     up to one consistent renaming) and printed as ‹time N›, ‹uuid N› or
//     ‹value N›; [Report].Nondeterministic lists them (logged under -v);
//     [ExactValues] compares them by value.
//   - Options: [EffectPolicy], [HTTPHost], [IgnoreColumns], [Normalize], [ExactValues],
//     [SnapshotOptions], [WithoutDuplicateEnqueue], [AttemptTimeout],
//     [MaxDeliveries], [Only], [OnServer], [TestName], [KeepFailedDatabase],
//     [EveryCrashPoint].
//   - The queue's semantics (queue.go), for queue adapters (package
//     twiceriver for River) and any other queue: [TerminalError],
//     [SnoozeError], [AckInJobTransaction], [QueueBookkeeping] (with
//     [Delivery]), [QueueWords].
//
// Long jobs: crash points that leave the same world as an earlier passing
// one are covered by it ([EveryCrashPoint] plays them all); the quick and
// default budgets thin a long job's crash and overlap points (keeping
// transaction boundaries, effects, the first and last points) and say so in
// the report; the first hung attempt ends the check; t.FailNow inside Run is
// reported with its line. AssertIdempotent on a *testing.T logs progress of
// a long check and names the running scenario just before go test -timeout.
//
// Reports: [Report.String] is the text a failing test prints;
// [Report.JSON] is versioned JSON (docs/report-schema.json, [JSONReport]);
// [Report.Markdown] adds a Mermaid sequence diagram per finding;
// [Report.Coverage] is the line a pass logs under go test -v.
// -twice.report=DIR (or TWICE_REPORT_DIR) writes them for every check, and
// under GITHUB_ACTIONS=true a failure is also an ::error annotation and a
// step summary.
//
// Settings: -twice.run=TOKEN (or TWICE_RUN) runs only the scenario a replay
// line names. PostgreSQL is found as package pgfixture describes.
//
// Connections: before it opens any, a check reserves from the server's
// max_connections what it may open (its database's 4 and 8 per worker: one,
// plus one or two for the concurrent scenarios), so parallel checks wait for
// each other rather than fail, and a check that can never fit fails at once
// with Report.Err saying which max_connections would do.
package twice
