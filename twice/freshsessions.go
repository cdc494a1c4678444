package twice

import (
	"context"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessions"
)

// freshSessions starts a scenario on fresh sessions: every worker's
// sessions ended, and ended in PostgreSQL (sessions.Fresh).
func (c *checker) freshSessions(ctx context.Context) error {
	workers := []*inject.Worker{c.worker}
	if c.conc != nil {
		workers = append(workers, c.conc.workers[:]...)
	}
	return sessions.Fresh(ctx, c.db.Pool(), c.db.Name(), workers)
}

// waitSessionsEnded waits until PostgreSQL has ended the sessions of the
// check's database whose application_name is among names (whose: who
// they are, for the error), at most 10 s (sessions.WaitEnded).
func (c *checker) waitSessionsEnded(ctx context.Context, names []string, whose string) error {
	return sessions.WaitEnded(ctx, c.db.Pool(), c.db.Name(), names, whose)
}
