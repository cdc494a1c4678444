package twice

import (
	"context"
	"fmt"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/inorder"
	"github.com/twicekit/twicekit/internal/sessions"
	"github.com/twicekit/twicekit/pgfixture"
)

// Parallel plays up to n scenarios of the check at once, each on a
// database of its own cloned from the same template (default 1: one after
// another; -twice.parallel, TWICE_PARALLEL). The report is the same,
// byte for byte, whatever n is. Each further database holds
// pgfixture.ControlPoolConns connections, and its workers (one to three,
// as the check's own) inject.MaxConnsPerWorker each; when the
// server's connection room has no free connections for them the check plays
// fewer at once and says so under go test -v. The job must keep its state in the database and its effects
// (as it does for the check to be meaningful at all): two scenarios' attempts
// run at the same time in one process. A check with HTTPHost handlers plays
// one scenario at a time, since every database shares the handlers.
func Parallel(n int) Option {
	return optionFunc(func(c *config) { c.Parallel = &n })
}

// startLanes makes the lanes (see lanes) while the reference runs play,
// and returns the function that waits for them (inorder.Start). The extra
// lanes close with c once waited for; wait may be called more than once.
func (c *checker) startLanes(ctx context.Context, n int) (wait func() ([]*checker, string, error)) {
	return inorder.Start(func() ([]*checker, string, error) { return c.lanes(ctx, n) }, func(l *checker) {
		c.OnClose(func() { _ = l.Close(context.WithoutCancel(ctx), false) })
	})
}

// lanes returns the checkers that play the sequential scenarios: c itself
// first, then up to n-1 more, each on a new database with its own worker
// and effect fakes. It makes fewer when the server's room has no free
// connections for more (never waiting for them: c already holds a
// reservation, and waiting while holding one could wait forever) and
// returns a note saying why, for go test -v. On an error it returns the
// lanes made so far, to be closed.
func (c *checker) lanes(ctx context.Context, n int) ([]*checker, string, error) {
	if n > 1 && len(c.cfg.Effects.Hosts) > 0 {
		return []*checker{c}, fmt.Sprintf("twice: %s: playing 1 scenario at a time, not %d: its HTTPHost handlers are shared by every database", c.job.Name, n), nil
	}
	return inorder.Make(c, n, func() (*checker, bool, error) { return c.newLane(ctx) }, func(made int) string {
		return fmt.Sprintf("twice: %s: playing %s at a time, not %d: the server's connection room (%d connections) has no free %d for another database and its workers; raise max_connections to play more",
			c.job.Name, count(made, "scenario"), n, c.Srv.ConnectionRoom(), c.cfg.WorkersNeeded()*inject.MaxConnsPerWorker+pgfixture.ControlPoolConns)
	})
}

// newLane makes one more lane: a database cloned from the check's
// template, a worker on it and effect fakes of its own. ok is false when
// the server has no free connections for it now.
func (c *checker) newLane(ctx context.Context) (lane *checker, ok bool, err error) {
	db, release, ok, err := c.Srv.TryCreateDBReserving(ctx, c.job.Schema, c.cfg.WorkersNeeded()*inject.MaxConnsPerWorker,
		fmt.Sprintf("a parallel lane of twice.Check of job %q", c.job.Name))
	if err != nil || !ok {
		return nil, false, err
	}
	worker, err := inject.NewWorkerConfigured(sessions.WorkerConfig(db.ConnConfig()), c.cfg.ConfigurePool)
	if err != nil {
		release()
		_ = db.Close(ctx, false)
		return nil, false, err
	}
	l := &checker{cfg: c.cfg, job: c.job}
	if err := l.Start(&c.cfg.Config, c.job.Seed, l.gate, c.Srv, db, worker, release, c.Shared); err != nil {
		_ = l.Close(context.WithoutCancel(ctx), false)
		return nil, false, err
	}
	return l, true, nil
}
