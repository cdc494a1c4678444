// Package faults sees the points of an attempt and crashes the attempt at one
// of them.
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
// Index:
//   - [Run], [Start], [FromContext]: one attempt as the harness sees it.
//   - [Plan]: where to crash and what to ask before each point.
//   - [Step], [Kind]: a point that was reached.
//   - [Point]: an explicit point in a job.
//   - [Conns], [Instrument], [InstrumentPool]: the pgx side — a registry of
//     the connections of one worker that a crash cuts, and the tracer that
//     turns statements into points.
//   - [WrapConnector], [OpenConnector], [DriverConns]: the same for any
//     database/sql driver (lib/pq, ...); a refused call never returns
//     driver.ErrBadConn, so database/sql cannot silently retry it.
//   - [Worker]: the handles of one queue worker (a pgx pool and a *sql.DB,
//     optionally on another driver with [Worker.UseDriver]), cut and healed
//     as one.
//   - [ErrCrashed], [ErrForeignContext], [ErrFinished], [ErrReplyLost]: what
//     a refused or struck call returns.
package faults
