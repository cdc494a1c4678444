// Package concurrent names the interleavings of concurrent attempts: the
// schedules a check explores when it runs two attempts of a job at once, and
// the tokens it prints and replays ("concurrent:A2B3A").
//
// A [Schedule] is a sequence of choices: entry n names the attempt (0 is A,
// 1 is B, ...) released at the n-th point. Its token is run-length: a letter
// per run of releases of the same attempt, followed by the run's length when
// it is more than one ("A2B3A": A twice, B three times, A once); the counts
// are optional when parsing, so "AABBBA" is the same schedule. The same token
// always replays the same interleaving. [Interleavings] counts the
// interleavings of attempts with given numbers of points, which is how a
// check decides between trying every one and sampling.
//
// The rule: concurrent exports what a user calls directly — schedules and
// their tokens, to read a report, replay a finding or draw schedules (package
// generators returns them). The deterministic, lock-aware scheduler that package twice drives
// (its choosers, PCT sampling, exhaustive enumeration, the lock-wait queries,
// traces and stuck-attempt reports) lives in internal/sched, which imports
// this package for the tokens; concurrent itself needs only the standard
// library, so generators and a user's tests do not compile pgx through it.
package concurrent
