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
//   - The job: [Job], [Attempt] ([Attempt.Effect], [Attempt.Now]), [SeedSQL].
//     Attempt.Pool and Attempt.DB are the database handles; Attempt.HTTP
//     routes by host to the Stripe-dialect provider at Attempt.Payments and
//     to the fakes mounted with [HTTPHost]; Attempt.Mailer and
//     Attempt.Webhooks record emails and webhooks. Every statement and
//     effect call through them is a point of the attempt.
//   - The check: [Check] returns a [Report] and never fails a test;
//     [AssertIdempotent] (Fatalf) and [ExpectIdempotent] (Errorf) run the
//     same check for tests, through the small [TB] interface.
//   - Scenarios: [Scenario] ([Scenario.Token], [Scenario.Describe]) of a
//     [ScenarioKind]: [Once] (the reference), [AckLost] ("sequential"),
//     [CrashBefore] ("crash@N"), [CrashAfterLast] ("crash@end"),
//     [DuplicateEnqueue], [CrashAfterApply] ("crash-after@N"), [ReplyLost]
//     ("reply-lost@N"), [Redrive] ("redrive-48h@N"), [Interleaved]
//     ("concurrent:A2B3A") and [Overlap] ("overlap@N"). Each kind is
//     described once, in scenario.go.
//   - Results: [Report] ([Report.OK], [Report.Tokens], [Report.String],
//     [Report.Timeline]) holds the reference [ScenarioRun] and every other
//     one ([ScenarioRun.Token]), each with its [Verdict] ([Kept], [Broken])
//     and its [AttemptRecord]s ([AttemptRecord.Name], [AttemptRecord.End]:
//     an [AttemptEnd] such as
//     [EndReturned], [EndError], [EndCrashed], [EndCrashedBeforeAck], [EndPanic],
//     [EndGoexit], [EndHung], [EndNotDelivered]). A [Finding] is a broken
//     scenario: its timeline, database diff, effects diff, hints, replay
//     token and [Problem]s, whose [ProblemKind] is [ProblemPanic],
//     [ProblemGoexit], [ProblemHung], [ProblemStuck], [ProblemGaveUp],
//     [ProblemForeignContext] or [ProblemCleanRunFailed].
//   - Budgets: [Budget], [QuickBudget], [DefaultBudget], [ThoroughBudget],
//     [Budgets], [ParseBudget], [WithBudget]; -twice.budget=NAME or
//     TWICE_BUDGET=NAME, -short meaning quick.
//   - Options ([Option]; they compose, later ones win), comparing: [EffectPolicy], [IgnoreColumns], [Normalize],
//     [ExcludeRows], [Schemas], [ExactValues].
//   - Options, scenarios: [WithoutDuplicateEnqueue], [LateRedrive],
//     [AttemptTimeout] ([DefaultAttemptTimeout]), [MaxDeliveries]
//     ([DefaultMaxDeliveries]), [Only], [EveryCrashPoint].
//   - Options, concurrent scenarios: [Isolation] ([IsolationLevel]:
//     [ReadCommitted], [RepeatableRead], [Serializable]),
//     [WithoutConcurrency], [ExploreAllInterleavings], [ScheduleSeed].
//   - Options, environment: [HTTPHost], [SQLDriver], [OnServer],
//     [KeepFailedDatabase], [TestName].
//   - The queue's semantics (queue.go), for queue adapters (package
//     twiceriver for River) and any other queue: [TerminalError],
//     [SnoozeError], [AckInJobTransaction], [QueueBookkeeping] (a
//     [QueueHook] given a [Delivery]), [QueueWords].
//   - Reports: [Report.JSON] ([JSONReport], [JSONOptions], [JSONScenario],
//     [JSONFinding], [JSONEvent], [JSONTableDiff], [JSONMismatch],
//     [ReportSchemaVersion]), [Report.Markdown], [Report.Coverage].
//
// The design, the packages and their arrows, and where a new scenario kind,
// fault or effect goes: docs/DESIGN.md in the repository.
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
