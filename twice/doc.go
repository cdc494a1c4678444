// Package twice checks that a background job is safe to run more than once.
//
// An at-least-once queue delivers a job again when its worker crashed after
// the work and before the ack, when the ack was lost, when the producer
// enqueued it twice, or when a human redrives it. [Check] plays that queue
// against a real PostgreSQL. It runs the job once on a new database as the
// reference. Then it plays every scenario and compares each one's rows and
// external effects with the reference.
//
//	func TestRewardOrder(t *testing.T) {
//	    twice.AssertIdempotent(t, rewardOrderJob(9812))
//	}
//
// # Jobs
//
// A [Job] names its schema, its seed and its Run function. Run gets an
// [Attempt]: its database handles (Pool, DB), an HTTP client that routes by
// host to the payment provider and to fakes mounted with [HTTPHost], and
// recorders for emails and webhooks. Every statement and effect call
// through them is a point of the attempt, where a scenario may strike.
// [Attempt.Effect] records an effect of any other kind. [Attempt.Now] is
// the check's clock, which stands still across redeliveries.
//
// A client the app builds from a host and port is pointed at the attempt:
// Attempt.SMTP is an SMTP server whose mail is the attempt's email, and
// [ServeFake] serves a fake of any other protocol at [Attempt.FakeAddr],
// whose [FakeConn.Effect] calls are the attempt's effects.
//
// # Checks and reports
//
// [Check] returns a [Report] and never fails a test. [AssertIdempotent]
// and [ExpectIdempotent] run the same check and fail the test through the
// small [TB] interface. A [Report] holds the reference [ScenarioRun], every
// other one with its [Verdict], and a [Finding] per broken scenario: its
// timeline, database and effects diffs, hints, replay token and [Problem]s.
//
// A connection the job opens on its own to the check's database is a
// [Problem] of kind [ProblemForeignSession], naming the [Session]: the
// check cannot see its statements (docs/visibility.md).
//
// [Report.String] is the text a failing test prints. [Report.JSON] is
// versioned JSON (docs/report-schema.json). [Report.Markdown] adds a
// Mermaid sequence diagram per finding. -twice.report=DIR (or
// TWICE_REPORT_DIR) writes them for every check. Under GITHUB_ACTIONS=true
// a failure is also an ::error annotation and a step summary.
//
// # Scenarios
//
// A [Scenario] is one way the queue delivers the job; its [ScenarioKind]
// says which, and scenario.go describes each kind once. A scenario's token
// ("crash@3", "concurrent:A2B3A") is printed on its replay line:
// -twice.run=TOKEN (or TWICE_RUN) runs only that scenario.
//
// The concurrent scenarios ([Overlap], [Interleaved]) run two attempts at
// once under a deterministic scheduler, at the [IsolationLevel] the job
// asks for.
//
// # Budgets
//
// A [Budget] bounds how much of a job a check plays. -twice.budget=NAME or
// TWICE_BUDGET=NAME picks [QuickBudget], [DefaultBudget] or
// [ThoroughBudget]; -short means quick; [WithBudget] wins over all of them.
// Crash points that leave the same world as an earlier passing one are
// covered by it ([EveryCrashPoint] plays them all). The first hung attempt
// ends the check.
//
// # Parallel scenarios and shards
//
// [Parallel] (-twice.parallel=N, TWICE_PARALLEL) plays up to N scenarios at
// once, each on a database of its own; the report is the same, byte for
// byte. [Shard] (-twice.shard=k/n, TWICE_SHARD) plays one shard of a
// check's scenarios on one machine of a CI matrix; the JSON report records
// it in a [JSONShard], and [MergeShards] (the command cmd/twice-merge)
// joins the shards' reports into one per check.
//
// # Varying values
//
// The reference is run twice. Values that differ between the two clean
// runs (now(), gen_random_uuid(), time.Now()) are varying values: they are
// compared by shape and print as placeholders (‹time 1›, ‹uuid 1›).
// [Report.Varying] lists them; [ExactValues] compares them by value.
//
// # Queues
//
// The queue's semantics are options: [TerminalError], [SnoozeError],
// [AckInJobTransaction], [QueueBookkeeping], [QueueWords] and
// [QueueLabels]. [QueueWordsOf] words a headline from what [Happened] in
// the scenario. Queue adapters (twiceriver, twiceasynq, twicegue) set them.
//
// # Connections
//
// Before it opens any, a check reserves from the server's max_connections
// what it may open. Parallel checks wait for each other rather than fail. A
// check that can never fit fails at once; Report.Err says which
// max_connections would do. PostgreSQL is found as package pgfixture
// describes.
//
// The design, the packages and their arrows, and where a new scenario kind,
// fault or effect goes: docs/DESIGN.md in the repository.
package twice
