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
