package twice

import (
	"context"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessions"
)

// freshSessions starts a scenario on fresh sessions: every worker's
// sessions reset in place or ended, and those ended ended in PostgreSQL
// (sessions.Fresh).
func (c *checker) freshSessions(ctx context.Context) error {
	return sessions.Fresh(ctx, c.db.Pool(), c.db.Name(), c.workers())
}

// endSessions ends every worker's sessions, and waits until PostgreSQL has
// ended them (sessions.End).
func (c *checker) endSessions(ctx context.Context) error {
	return sessions.End(ctx, c.db.Pool(), c.db.Name(), c.workers())
}

// workers are the check's workers: its own, and the concurrent
// scenarios' when it plays them.
func (c *checker) workers() []*inject.Worker {
	workers := []*inject.Worker{c.worker}
	if c.conc != nil {
		workers = append(workers, c.conc.workers[:]...)
	}
	return workers
}
