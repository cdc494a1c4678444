// Package twicegue checks gue jobs (github.com/vgarvardt/gue/v5) as gue's
// worker runs them: the producer's job is enqueued with gue's client, and
// each delivery is gue's client on the attempt's pool (gue's pgx v5
// adapter) locking the job's row in a transaction, the work function
// getting the real *gue.Job with j.Tx(), then the job deleted and the
// transaction committed, or the error recorded with j.Error (which commits
// too):
//
//   - the ack is the job's deletion, committed in j.Tx() with the work done
//     there: a crash after that commit delivers nothing again; a crash
//     before it rolls j.Tx() back and another worker locks the job again,
//     while work done outside j.Tx() (on the pool) stays done;
//   - an error commits j.Tx() with gue's error count and next run time: the
//     work done in j.Tx() before the error commits with it;
//   - gue.ErrDiscardJob, or a Backoff that returns a negative duration,
//     deletes the job (DiscardedError ends it); gue.ErrRescheduleJobIn and
//     ErrRescheduleJobAt mean "later";
//   - gue has no uniqueness: a duplicate enqueue is a second row, worked
//     too; a second worker skips a job whose row is locked (the concurrent
//     scenarios run).
//
// With Job.WorkFollowUps, the jobs the work function enqueues are worked
// after every scenario with the WorkMap's function for their type, as gue's
// worker works them, on the check's clock (a RunAt 30 s later runs at
// once); then the world is compared at rest.
//
// Checking a work function takes three lines:
//
//	twicegue.AssertIdempotent(t, twicegue.Job{Schema: schema, Seed: seed,
//		Job:     &gue.Job{Type: "reward", Args: args},
//		WorkMap: func(a *twice.Attempt) gue.WorkMap { return gue.WorkMap{"reward": RewardWork} }})
//
// The suite in differential_test.go works the same jobs with gue's own
// Worker on the test's PostgreSQL and compares what gue did with this
// model. docs/queues.md has the table of semantics and what is not
// modelled.
//
// Versions: gue v5.6.0 to v5.8.0 (v5.5.0 lacks gue.ErrJobPanicked). This
// is a module of its own (github.com/twicekit/twicekit/twicegue): its
// go.mod requires gue v5.6.0, the oldest release whose API it uses, so
// adding it never raises an app's gue; go.newest.mod requires v5.8.0, and
// CI runs the tests on both.
package twicegue
