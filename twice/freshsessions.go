package twice

import (
	"context"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessions"
)

// workerSessionNames are the application_names of the sessions of the
// check's workers.
var workerSessionNames = sessions.WorkerNames

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
// they are, for the error), at most 10 s (sessions.WaitEnded).
func (c *checker) waitSessionsEnded(ctx context.Context, names []string, whose string) error {
	return sessions.WaitEnded(ctx, c.db.Pool(), c.db.Name(), names, whose)
}
