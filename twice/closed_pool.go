package twice

import (
	"errors"

	"github.com/twicekit/twicekit/internal/sessions"
)

// a.Pool is the check's: it is made before the attempt and used by every
// delivery on its worker after it. A job that closes it (a constructor
// that takes a pool and closes it, defer pool.Close()) leaves every later
// statement on it failing with "closed pool": the check proves nothing
// about the job, and says so instead of a diff of the rows those
// deliveries could not write.

// errClosedPool is the check's refusal when the job closed a.Pool.
var errClosedPool = errors.New("twice: the job closed the check's pool (a.Pool.Close(), or a component given a.Pool that closes it, " +
	"as a constructor's defer pool.Close() does): the statements on it after that failed with \"closed pool\", so the check proves nothing about the job; " +
	"a.Pool belongs to the check, which closes it: do not close it (give a component that closes its pool one of its own, " +
	"pgxpool.NewWithConfig(ctx, a.Pool.Config()))")

// closedPool reports whether err says the pool was closed and the worker's
// pool p is (internal/sessions).
var closedPool = sessions.ClosedPool

// poolClosedByJob returns the check's refusal when an attempt found its
// worker's pool closed.
func poolClosedByJob(rep *Report) error {
	runs := rep.Scenarios
	if rep.Reference != nil {
		runs = append([]*ScenarioRun{rep.Reference}, runs...)
	}
	for _, sr := range runs {
		for _, a := range sr.Attempts {
			if a.closedPool {
				return errClosedPool
			}
		}
	}
	return nil
}
