// Package inject is the engine of package faults: it sees the points of an
// attempt and crashes the attempt at one of them. Package twice drives it;
// no user calls it.
//
// A point is a step boundary the harness can see without any change to the
// job: every SQL statement the attempt sends through the handles it was given
// (BEGIN, COMMIT, ROLLBACK, savepoints, batches, COPY and PREPARE included),
// every external effect call, and every explicit [Point]. A crash is
// fail-stop: the attempt's connections are cut so PostgreSQL aborts its open
// transaction and drops its session locks, its later statements and effect
// calls are refused before they reach the world, and its context is
// cancelled. Effects it made before the crash stay made.
//
// The rule: what a job or a user's code calls is exported by package faults
// (Point, the errors, Step and Kind, WrapConnector and OpenConnector), as
// aliases of the values here or thin wrappers; everything here is the engine
// twice drives. This package never imports faults.
//
// Index:
//   - [Run], [Start], [FromContext]: one attempt as the harness sees it
//     ([Run.Enter], [Run.EnterStep], [Run.Applied], [Run.Crash],
//     [Run.Crashed], [Run.Finish], [Run.Steps], [Run.Name], [Run.OnCrash]).
//   - [Plan]: where to crash and what to ask before each point.
//   - [Step], [Kind] ([SQL], [Effect], [Explicit]), [Label]: a point that was
//     reached and its label.
//   - [Point]: an explicit point in a job.
//   - [Conns], [NewConns], [IsCut], [Instrument], [InstrumentPool],
//     [Foreign]: the pgx side — a registry of the connections of one worker
//     that a crash cuts ([Conns.Dial], [Conns.CutAll], [Conns.Dials],
//     [Conns.Open]), and the tracer that turns statements into points.
//   - [WrapConnector], [OpenConnector], [DriverConns], [NewDriverConns]: the
//     same for any database/sql driver (lib/pq, ...) ([DriverConns.CutAll],
//     [DriverConns.Opens], [DriverConns.Open]); a refused call never returns
//     driver.ErrBadConn, so database/sql cannot silently retry it.
//   - [Worker], [NewWorker], [MaxConnsPerWorker]: the handles of one queue
//     worker (a pgx pool and a *sql.DB, optionally on another driver with
//     [Worker.UseDriver]), cut and healed as one ([Worker.Cut],
//     [Worker.OnCut], [Worker.Heal], [Worker.RecordForeign],
//     [Worker.TakeForeign], [Worker.Close]).
//   - [ErrCrashed], [ErrForeignContext], [ErrFinished], [ErrReplyLost],
//     [ErrStatementReplyLost]: what a refused or struck call returns.
//   - [Plan.ImplicitTx], [Step.Implicit], [Step.Commits], [ImplicitLabel]
//     (implicit.go): an autocommit statement played as its implicit
//     transaction (a second point before its COMMIT), and a statement whose
//     reply is lost after PostgreSQL committed it.
package inject
