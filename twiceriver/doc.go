// Package twiceriver checks a River worker (github.com/riverqueue/river) as
// River runs it, with River's own delivery semantics.
//
//	func TestRewardWorker(t *testing.T) {
//		twiceriver.AssertIdempotent(t, twiceriver.Job[RewardArgs]{Schema: schema, Seed: seed, Args: RewardArgs{OrderID: 9812},
//			Worker: func(a *twice.Attempt) river.Worker[RewardArgs] { return &RewardWorker{Pool: a.Pool} }})
//	}
//
// River's migrations are applied before the application's schema. Each
// attempt is a real *river.Job[T] whose row is in river_job as River's
// producer leaves it (inserted with River's client, running, its attempt
// counted), and its context carries a real *river.Client on the attempt's
// pool, never started, so river.ClientFromContext, Insert, InsertTx and
// river.JobCompleteTx work. The jobs the worker enqueues are compared
// (kind, args, queue, state, priority, max attempts, tags, unique key);
// River's bookkeeping columns and the job's own row are not.
//
// Given the application's workers (Job.Workers), the check works those
// jobs after every scenario, and what they enqueue, with a real, started
// river.Client running those workers on the check's clock (a follow-up
// scheduled 30 s later runs at once, its ScheduledAt fast-forwarded); then
// it compares the world at rest. A completed follow-up is left out of the
// comparison; one whose kind has no worker stays a row.
//
// Work runs as River's executor runs it, inside the application's
// river.Config (Job.Config): its middleware, hooks, JobTimeout,
// RescueStuckJobsAfter, MaxAttempts and RetryPolicy. A recovered panic is
// a failed attempt ([PanicError]), retried as River does.
//
// River's semantics, as twice options (see twice.AckInJobTransaction and
// the others): a completion committed in the worker's transaction
// (JobCompleteTx) is the ack, and no scenario runs the job again after it;
// River completes any other job after Work returns, and a crash before that
// leaves it running until River's rescuer runs it again (only once the
// worker's timeout ran out; never a job with Timeout -1, whose work a
// crash loses). river.JobCancel ends the job; river.JobSnooze is settled
// inside the delivery as River does (the attempt given back, "snoozes"
// counted in the metadata) and run again, not a failure, up to 10 times in
// a row ([SnoozedForeverError]); other errors are retried up to the job's
// MaxAttempts. River never runs a job twice at once (its rescuer waits for
// the worker's timeout), so the concurrent scenarios are skipped. Reports
// say what happened in River's words, and name River's statements by what
// they are (river.JobCompleteTx).
//
// The model is checked against a started river.Client, delivery by
// delivery, by the differential suite (differential_test.go); its table is
// in docs/river.md.
//
// Index:
//   - [Job]: the worker, its args, the schema and seed, the app's
//     river.Config.
//   - [PeriodicJob]: the app's periodic job, its schedule and the
//     constructor that builds each run's args (Job.PeriodicJob); the next
//     run's args are built at its time on the check's clock.
//   - [PanicError], [SnoozedForeverError]: what an attempt returns when
//     River recovered a panic, or the job snoozed without end.
//   - [Check] (the report), [AssertIdempotent] (Fatalf), [ExpectIdempotent]
//     (Errorf).
//   - [Job.Twice]: the twice.Job and River's semantics as twice options, for
//     twice.Check or a rapid property.
//   - [Migrations] ([Migrator]): River's own migrations through rivermigrate,
//     a pgfixture.Migrator to put before an application's schema with
//     pgfixture.Migrations. It lives here so that a pgfixture user who does
//     not use River never compiles it.
//
// The story examples/riverjobs is the loyalty reward and the invoice email
// as River workers, broken and fixed.
//
// Versions: River v0.48.0 to v0.51.2 (v0.47.0 lacks the driver executor's
// InitDriver). This is a module of its own
// (github.com/twicekit/twicekit/twiceriver): its go.mod requires River
// v0.48.0, the oldest release whose API it uses, so adding it never raises
// an app's River; go.newest.mod requires v0.51.2, and CI runs the tests on
// both.
package twiceriver
