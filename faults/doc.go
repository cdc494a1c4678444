// Package faults is what a job, or the code a job calls, uses of the harness
// that crashes attempts at their points.
//
// A point is a step boundary the harness can see without any change to the
// job: every SQL statement the attempt sends through the handles it was given
// (BEGIN, COMMIT, ROLLBACK, savepoints, batches, COPY and PREPARE included),
// every external effect call, and every explicit [Point]. Outside a check,
// [Point] does nothing, so jobs can keep their explicit points in production.
//
// A crash is fail-stop: the attempt's connections are cut so PostgreSQL aborts
// its open transaction and drops its session locks, its later statements and
// effect calls are refused before they reach the world, and its context is
// cancelled. Effects it made before the crash stay made.
//
// The rule: faults exports what a job or a user's code calls, and the types a
// check's results show — [Point], the errors a refused or struck call
// returns, the points an attempt reached ([Step], [Kind]) and the wrapper for
// a database/sql handle the job opens itself. The engine that package twice
// drives (starting attempts and planning their crashes, the pgx tracer, the
// connection registries a crash cuts, the queue workers) lives in
// internal/inject; the names here are aliases of its values or thin wrappers,
// so errors.Is and Step values are the same on both sides.
//
// # Handles the job opens itself
//
// [WrapConnector] and [OpenConnector] give points and crashes to a
// database/sql handle the job opens itself (lib/pq, ...). A refused call
// never returns driver.ErrBadConn, so database/sql cannot silently retry
// it.
package faults
