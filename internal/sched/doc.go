// Package sched is the engine of package concurrent: it runs attempts of a
// job at the same time under a deterministic, lock-aware scheduler, and
// explores their interleavings. Package twice drives it; no user calls it.
//
// Every point of an attempt (each SQL statement, effect call and explicit
// point) waits for the [Scheduler], which releases exactly one attempt at a
// time, and only when no attempt is running: each other attempt waits at a
// point, waits in PostgreSQL on a lock another attempt holds, or has
// returned. Which ready attempt goes is a [Chooser]'s decision, so the same
// choices always give the same interleaving; a [Replay] is such a sequence of
// choices with a compact token ("A2B3A": A twice, B three times, A once).
// twice plays the attempts with inject's Plan.ImplicitTx: a statement sent
// outside a transaction block reaches two points, the statement and its
// implicit COMMIT, as PostgreSQL runs it; the scheduler sees both as points.
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
// The rule: what a user calls directly is exported by package concurrent
// (Schedule and its tokens, ParseSchedule, Letter, Interleavings); the named budgets are twice's (twice.Budget, which
// twice turns into a [Budget] for [Explore]); everything here is the engine
// twice drives. A public
// concurrent.Schedule becomes a chooser by conversion: Replay(s).
//
// Index:
//   - [Scheduler], [New], [Config] ([DefaultStuckAfter], [DefaultPoll],
//     [MaxPollFactor], [DefaultMaxReleases]): one run of concurrent attempts
//     ([Scheduler.Plan], [Scheduler.Run], [Scheduler.Returned],
//     [Scheduler.Stop]); [ErrStopped].
//   - [Chooser], [Decision] ([Decision.IsReady]): who goes next; [Replay]
//     ([Replay.Choose]), [Overlap] ([Overlap.Choose]), [PCT] ([PCT.Choose],
//     [PCT.Key]).
//   - [Replay.Token], [Replay.String], [Replay.Attempts], [ParseSchedule],
//     [Letter], [MaxAttempts]: tokens.
//   - [Trace] ([Trace.Schedule], [Trace.Token], [Trace.String],
//     [Trace.Blocks]), [Event] ([Event.String]), [EventKind] ([Released],
//     [Blocked], [Returned]), [Choice]: what a run did.
//   - [Exhaustive] ([Exhaustive.Next], [Exhaustive.Record]), [Explore],
//     [Budget] ([Budget.Choose]), [Strategy] ([Enumerate], [Sample],
//     [Strategy.String]), [Interleavings], [Stop]: exploration.
//   - [Locks], [PostgresLocks], [Querier], [Waits]: asking the database
//     about lock waits.
//   - [StuckError] ([StuckError.Error]), [Position] ([Position.String]),
//     [PositionState] ([StateRunning], [StateWaiting], [StateBlocked],
//     [StateReturned], [StateNotStarted]): attempts stuck outside PostgreSQL.
//
// The twice package plays these scenarios for every check (tokens
// "overlap@k" and "concurrent:<schedule>"); budgets come from
// -twice.budget=quick|default|thorough, TWICE_BUDGET, or -short (quick).
package sched
