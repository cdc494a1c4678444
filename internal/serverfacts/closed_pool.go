package serverfacts

import "errors"

// a.Pool is the check's: it is made before the attempt and used by every
// delivery on its worker after it. A job that closes it (a constructor
// that takes a pool and closes it, defer pool.Close()) leaves every later
// statement on it failing with "closed pool": the check proves nothing
// about the job, and says so instead of a diff of the rows those
// deliveries could not write.

// ErrClosedPool is the check's refusal when the job closed a.Pool.
var ErrClosedPool = errors.New("twice: the job closed the check's pool (a.Pool.Close(), or a component given a.Pool that closes it, " +
	"as a constructor's defer pool.Close() does): the statements on it after that failed with \"closed pool\", so the check proves nothing about the job; " +
	"a.Pool belongs to the check, which closes it: do not close it (give a component that closes its pool one of its own, " +
	"pgxpool.NewWithConfig(ctx, a.Pool.Config()))")

// ClosedPoolByJob returns the check's refusal when an attempt found its
// worker's pool closed.
func ClosedPoolByJob(attempts []Attempt) error {
	for _, a := range attempts {
		if a.ClosedPool {
			return ErrClosedPool
		}
	}
	return nil
}
