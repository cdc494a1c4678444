// Package concurrent runs attempts of a job at the same time under a
// deterministic, lock-aware scheduler, and explores their interleavings.
//
// Every point of an attempt (each SQL statement, effect call and explicit
// faults.Point) waits for the [Scheduler], which releases exactly one attempt
// at a time, and only when no attempt is running: each other attempt waits
// at a point, waits in PostgreSQL on a lock another attempt holds, or has
// returned. Which ready attempt goes is a [Chooser]'s decision, so the same
// choices always give the same interleaving; a [Schedule] is such a sequence
// of choices with a compact token ("A2B3A": A twice, B three times, A once).
//
// Lock awareness works like PostgreSQL's isolation tester: while a released
// attempt's statement is in flight, a control connection asks PostgreSQL
// (pg_blocking_pids, pg_safe_snapshot_blocking_pids) whether that backend
// waits for a session of another attempt. If so, the attempt is blocked and
// another one goes; PostgreSQL's answers decide, not sleeps (the poll
// interval only paces the questions). A deadlock is broken by PostgreSQL,
// which fails one attempt's statement (40P01); serialization failures
// (40001) and unique violations likewise come back to the job as errors, and
// the harness redelivers the job. An attempt that reaches no point, does not
// return and waits on no attempt's lock for StuckAfter is stuck outside
// PostgreSQL (a mutex, a channel, a sleep): [Scheduler.Run] returns a
// [*StuckError] with every attempt's position, and nothing hangs.
//
// Exploration: [Explore] runs every distinct interleaving ([Exhaustive],
// depth first; lock waits prune the ones that cannot happen) when
// C(a+b, a) = [Interleavings](a, b) fits the [Budget], and seeded PCT samples
// ([NewPCT]: random priorities, d−1 priority change points) otherwise. Every
// run, enumerated or sampled, yields a [Trace] whose token replays it.
// [Overlap] is the visibility-timeout case as a chooser: A pauses after its
// point k, B runs to the end, A resumes.
//
// Index:
//   - [Scheduler], [New], [Config]: one run of concurrent attempts.
//   - [Chooser], [Decision]: who goes next; [Schedule], [Overlap], [PCT].
//   - [Schedule.Token], [ParseSchedule], [Letter]: tokens.
//   - [Trace], [Event], [Choice]: what a run did.
//   - [Exhaustive], [Explore], [Budget] ([Quick], [Default], [Thorough]),
//     [ParseBudget], [Interleavings], [Stop]: exploration.
//   - [Locks], [PostgresLocks], [Waits]: asking the database about lock waits.
//   - [StuckError], [Position]: attempts stuck outside PostgreSQL.
//
// The twice package plays these scenarios for every check (tokens
// "overlap@k" and "concurrent:<schedule>"); budgets come from
// -twice.budget=quick|default|thorough, TWICE_BUDGET, or -short (quick).
package concurrent
