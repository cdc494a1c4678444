package twice

import (
	"context"

	"github.com/twicekit/twicekit/internal/crashstates"
)

// Crash states explored once: two crash points that leave the same world
// (rows, sequences, effects) lead to the same redelivery, so the check plays
// the first and reports the others as covered by it, unless the first broke
// a promise. internal/crashstates fingerprints the worlds during the
// reference run and keeps the cache. twice keeps the option and hands it
// the crash points of its plan.

// EveryCrashPoint plays every crash point, even those that leave the world
// exactly as an earlier one does (by default such a point is covered by the
// earlier one and not replayed).
func EveryCrashPoint() Option {
	return optionFunc(func(c *config) { c.everyCrashPoint = true })
}

// newWorldPrints prepares the fingerprints of the check's database and
// effects (internal/crashstates).
func (c *checker) newWorldPrints(ctx context.Context) (*crashstates.Prints, error) {
	return crashstates.New(ctx, c.db.Pool, c.log.Effects)
}

// crashPoints is, for each scenario, its point when it is a crash before
// that point, else 0 (crashstates.CoveredBy).
func crashPoints(scenarios []Scenario) []int {
	out := make([]int, len(scenarios))
	for i, s := range scenarios {
		if s.Kind == CrashBefore {
			out[i] = s.Point
		}
	}
	return out
}

// coveredBy is, for each planned scenario, the index of the earlier crash
// point that leaves the same world (-1: none, or not a crash point, or the
// cache is off), as the crash cache decides it.
func coveredBy(scenarios []Scenario, prints *crashstates.Prints) []int {
	return crashstates.CoveredBy(crashPoints(scenarios), prints)
}
