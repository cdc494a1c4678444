package sessions

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// WorkerNames are the application_names of the sessions of the check's
// workers.
var WorkerNames = []string{WorkerName, "twice-attempt-A", "twice-attempt-B"}

// workerSessionsSQL counts the sessions of the check's workers still on
// database $1.
const workerSessionsSQL = `SELECT count(*) FROM pg_stat_activity
WHERE datname = $1 AND backend_type = 'client backend' AND application_name = ANY($2)`

// endedWait bounds the wait for the sessions of an earlier scenario to end
// once their connections are closed.
const endedWait = 10 * time.Second

// WaitEnded waits until PostgreSQL has ended the sessions of database
// dbname whose application_name is among names (whose: who they are, for
// the error), at most endedWait.
func WaitEnded(ctx context.Context, pool *pgxpool.Pool, dbname string, names []string, whose string) error {
	deadline := time.Now().Add(endedWait)
	for {
		var n int
		if err := pool.QueryRow(ctx, workerSessionsSQL, dbname, names).Scan(&n); err != nil {
			return fmt.Errorf("twice: could not look at the sessions of the check's workers (pg_stat_activity): %w", err)
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("twice: %d session(s) of %s were still open %s after their connections were closed; the server did not end them (is it overloaded?)", n, whose, endedWait)
		}
		time.Sleep(time.Millisecond)
	}
}
