package twice

import (
	"context"
	"fmt"
	"time"

	"github.com/twicekit/twicekit/internal/inject"
)

// workerSessionNames are the application_names of the sessions of the
// check's workers.
var workerSessionNames = []string{checkWorkerName, "twice-attempt-A", "twice-attempt-B"}

// workerSessionsSQL counts the sessions of the check's workers still on
// database $1.
const workerSessionsSQL = `SELECT count(*) FROM pg_stat_activity
WHERE datname = $1 AND backend_type = 'client backend' AND application_name = ANY($2)`

// freshSessionsWait bounds the wait for the sessions of an earlier scenario
// to end once their connections are closed.
const freshSessionsWait = 10 * time.Second

// freshSessions starts a scenario as the reference run started: every
// worker's sessions are ended (inject.Worker.Fresh), and the check waits
// until PostgreSQL has ended them, so that no temporary table, advisory
// lock, SET, prepared statement or LISTEN of an earlier scenario reaches this
// one's first delivery, and the reset that follows is never blocked by them.
// Redeliveries within the scenario reuse sessions, as a pooled production
// connection would.
func (c *checker) freshSessions(ctx context.Context) error {
	workers := []*inject.Worker{c.worker}
	if c.conc != nil {
		for _, w := range c.conc.workers {
			if w != nil {
				workers = append(workers, w)
			}
		}
	}
	for _, w := range workers {
		w.Fresh()
	}
	return c.waitSessionsEnded(ctx, workerSessionNames, "the check's workers")
}

// waitSessionsEnded waits until PostgreSQL has ended the sessions of the
// check's database whose application_name is among names (whose: who
// they are, for the error), at most freshSessionsWait.
func (c *checker) waitSessionsEnded(ctx context.Context, names []string, whose string) error {
	deadline := time.Now().Add(freshSessionsWait)
	for {
		var n int
		if err := c.db.Pool().QueryRow(ctx, workerSessionsSQL, c.db.Name(), names).Scan(&n); err != nil {
			return fmt.Errorf("twice: could not look at the sessions of the check's workers (pg_stat_activity): %w", err)
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("twice: %d session(s) of %s were still open %s after their connections were closed; the server did not end them (is it overloaded?)", n, whose, freshSessionsWait)
		}
		time.Sleep(time.Millisecond)
	}
}
