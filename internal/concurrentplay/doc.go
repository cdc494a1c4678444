// Package concurrentplay plays a check's concurrent scenarios: two
// deliveries at once under the lock-aware scheduler (internal/sched).
//
// It owns which two deliveries a family of concurrent scenarios runs at
// once (Pair, SameJob, DuplicateJobs): one job ID delivered twice, or the
// two copies of a duplicate enqueue under two job IDs, and whether the
// check plays each.
// It owns the concurrent points of an attempt: after every autocommit
// statement comes the point at which its implicit transaction commits,
// where the other attempt may run too (points.go).
// It turns a concurrent scenario's replay token into the scenario and its
// schedule, and says the scenario's kind as internal/scenarios names it
// (token.go).
// It plays a check's concurrent scenarios in order, pair after pair, with
// room kept in the wall budget for the pairs still to come, each pair
// through internal/explore (run.go).
// It plays one scenario's two attempts under the scheduler, crashes those
// still running when it stops, and names the lock that each stuck attempt
// waits for when the session of an attempt that returned still holds it.
// It says which problems the scenario made (an attempt's own end, attempts
// stuck) and redelivers the attempts the queue would deliver again when it
// made none (play.go).
// It makes the concurrent scenarios' workers: their sessions' names and
// isolation level (Isolation names the levels as PostgreSQL does), how
// many workers a check needs, and its name in a server's connection limit
// error (workers.go).
//
// twice keeps the options and their docs (Isolation, ScheduleSeed,
// WithoutConcurrency, WithoutOverlappingDeliveries, ConcurrentDuplicates,
// ExploreAllInterleavings, WithBudget). It keeps the scenarios, their runs
// and their comparison. It starts an attempt on a worker, records it, words
// the problem its end makes, and delivers a job again, behind callbacks.
package concurrentplay
