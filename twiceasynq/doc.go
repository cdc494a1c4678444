// Package twiceasynq checks asynq handlers (github.com/hibiken/asynq) as
// asynq runs them: a real asynq.Handler gets a real *asynq.Task and a
// context that carries what asynq's server puts there (asynq.GetTaskID,
// GetRetryCount, GetMaxRetry, GetQueueName, the task's deadline), and the
// check plays asynq's delivery semantics:
//
//   - the ack is in Redis, after the handler returned, never in the job's
//     transaction: a lost ack, or a worker that dies before it, lets the
//     task's lease expire and asynq's recoverer deliver it again, its retry
//     count one higher;
//   - asynq.SkipRetry (archived) and asynq.RevokeTask (deleted) end the
//     task; any other error is retried up to MaxRetry (default 25), then
//     the task is archived;
//   - a duplicate enqueue is played after the first task ended: asynq
//     refuses a TaskID while the first is still stored (archived, or
//     completed and kept for its Retention) and a Unique(ttl) task while
//     its lock is held (released when the task succeeds or is revoked);
//     otherwise it accepts the copy, under the same TaskID or another ID;
//   - a handler enqueues through NewClient(a), asynq's client played for
//     the attempt, or through its own *asynq.Client built on
//     RedisClientOpt(a), a Redis the check owns for the attempt: an
//     enqueue is a point and an effect (EffectKind), refused as asynq
//     refuses it; with Job.Mux, the app's ServeMux, the check works what
//     was enqueued after every scenario;
//   - concurrent deliveries are off: asynq cancels the handler's context
//     when the task's lease expires, and its recoverer delivers the task
//     again only 30 s after that.
//
// Checking a handler takes three lines:
//
//	twiceasynq.AssertIdempotent(t, twiceasynq.Job{Schema: schema, Seed: seed,
//		Task:    asynq.NewTask("reward:order", payload, asynq.TaskID("reward:9812")),
//		Handler: func(a *twice.Attempt) asynq.Handler { return NewRewardHandler(a.Pool) }})
//
// The Redis of RedisClientOpt(a) forwards every command to a real Redis:
// Debian's redis-server when it is on the PATH (started once per test
// binary, killed with it), else an embedded miniredis; no set-up is
// needed. It plays asynq's enqueue scripts as NewClient(a)'s enqueue
// (redis.go, script.go).
//
// The suite in differential_test.go runs the same handlers on a real
// asynq.Server against a real Redis (redis-server, started by the test)
// and compares what asynq did with this model. docs/queues.md has the
// table of semantics and what is not modelled.
//
// Versions: asynq v0.24.1 to v0.26.0. Task headers came with v0.26.0:
// on an older asynq a task has none, and the check's tasks carry none.
// asynq.RevokeTask came with v0.25.0: on v0.24.1 no handler returns it.
// twiceasynq names neither (headers.go, revoke.go), so one build serves
// every release. This is a module of its own
// (github.com/twicekit/twicekit/twiceasynq): its go.mod requires asynq
// v0.24.1, the oldest release it supports, so adding it never raises an
// app's asynq; go.newest.mod names the newest, and CI runs the tests on
// both.
package twiceasynq
