package sessions

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/internal/inject"
)

// WorkerNames are the application_names of the sessions of the check's
// workers.
var WorkerNames = []string{WorkerName, "twice-attempt-A", "twice-attempt-B"}

// workerSessionsSQL counts the sessions of the check's workers still on
// database $1, but the kept ones ($3).
var workerSessionsSQL = `SELECT count(*) FROM ` + ActivityOf("$1") + ` AS s
WHERE backend_type = 'client backend' AND application_name = ANY($2) AND pid <> ALL($3::int[])`

// endedWait bounds the wait for the sessions of an earlier scenario to end
// once their connections are closed.
const endedWait = 10 * time.Second

// maxEndedPause bounds the pause between two looks of WaitEnded, which
// starts at 1 ms and doubles: each look is a query.
const maxEndedPause = 8 * time.Millisecond

// WaitEnded waits until PostgreSQL has ended the sessions of database
// dbname whose application_name is among names (whose: who they are, for
// the error), but those whose process ID is in kept, at most endedWait.
func WaitEnded(ctx context.Context, pool *pgxpool.Pool, dbname string, names []string, kept []uint32, whose string) error {
	deadline := time.Now().Add(endedWait)
	pids := make([]int32, len(kept))
	for i, p := range kept {
		pids[i] = int32(p)
	}
	pause := time.Millisecond
	for {
		var n int
		if err := pool.QueryRow(ctx, workerSessionsSQL, dbname, names, pids).Scan(&n); err != nil {
			return fmt.Errorf("twice: could not look at the sessions of the check's workers (pg_stat_activity): %w", err)
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("twice: %d session(s) of %s were still open %s after their connections were closed; the server did not end them (is it overloaded?)", n, whose, endedWait)
		}
		time.Sleep(pause)
		pause = min(2*pause, maxEndedPause)
	}
}

// Fresh starts a scenario as the reference run started: every worker's
// sessions start as new ones (inject.Worker.Fresh; a nil worker is
// skipped), each idle session of a worker's pool reset in place and every
// other session ended, and it waits until PostgreSQL has ended those, so
// that no temporary table, advisory lock, SET, prepared statement or
// LISTEN of an earlier scenario reaches this one's first delivery, and the
// reset that follows is never blocked by them. Redeliveries within the
// scenario reuse sessions, as a pooled production connection would.
func Fresh(ctx context.Context, pool *pgxpool.Pool, dbname string, workers []*inject.Worker) error {
	var kept []uint32
	for _, w := range workers {
		if w != nil {
			kept = append(kept, w.Fresh(ctx)...)
		}
	}
	return WaitEnded(ctx, pool, dbname, WorkerNames, kept, "the check's workers")
}

// End ends every session of the workers (inject.Worker.End; a nil worker
// is skipped) and waits until PostgreSQL has ended them: after a reset that
// cloned the database again, whose sessions [Fresh] kept were ended with it.
func End(ctx context.Context, pool *pgxpool.Pool, dbname string, workers []*inject.Worker) error {
	for _, w := range workers {
		if w != nil {
			w.End()
		}
	}
	return WaitEnded(ctx, pool, dbname, WorkerNames, nil, "the check's workers")
}
