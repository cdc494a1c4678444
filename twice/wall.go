package twice

import (
	"time"
)

// DefaultWallBudget bounds one check's wall time unless WallBudget,
// -twice.wall or TWICE_WALL say otherwise: well inside go test's own
// default -timeout of 10 minutes, with room for the other tests of the
// package.
const DefaultWallBudget = 2 * time.Minute

// WallBudget bounds the check's wall time to d (DefaultWallBudget when not
// given; -twice.wall and TWICE_WALL set it for every check). d <= 0 means
// no bound.
//
// The budget is spent, never forecast away. The scenarios play in rounds:
// every kind's first scenario (ack lost, crash points, crash after the
// last point, duplicate enqueue, each effect's faults, the overlaps, the
// interleavings) before any kind gets its second, and so on while there is
// time. A scenario that would end past d is not started. The report names
// every scenario left out and every kind cut short. AssertIdempotent and
// ExpectIdempotent fail a check that left anything out, saying how to give
// it room, unless [PartialCheck] says why a partial check is enough.
func WallBudget(d time.Duration) Option {
	return optionFunc(func(c *config) { c.Wall = &d })
}

// PartialCheck declares that a check the wall budget cut short is enough
// for this test, and why. AssertIdempotent and ExpectIdempotent then pass
// it when it found nothing; its report still names what was left out, and
// the reason.
func PartialCheck(reason string) Option {
	return optionFunc(func(c *config) { c.PartialOK = reason })
}
