package concurrentplay

import (
	"fmt"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/explore"
	"github.com/twicekit/twicekit/internal/sched"
	"github.com/twicekit/twicekit/internal/thin"
	"github.com/twicekit/twicekit/internal/wall"
)

// Check is a check's concurrent scenarios, on lanes of type L, each
// scenario played making a run of type R.
type Check[L, R any] struct {
	Own   L   // the check's own lane
	Lanes []L // every lane, Own first
	// Points are the concurrent points of each attempt (Points of the
	// reference run's first attempt).
	Points []faults.Step

	// Only is the concurrent token given to -twice.run ("": every
	// scenario), OnlyDuplicate whether it is a concurrent duplicate's.
	Only          string
	OnlyDuplicate bool

	Pairs [2]Pair // one job ID delivered twice, then the concurrent duplicates
	Off   Off

	// Budget is the budget's overlap points (Budget.OverlapPoints) and its
	// interleavings for a job of n concurrent points, or the user's mistake
	// in naming it.
	Budget func(n int) (overlapPoints int, interleavings sched.Budget, err error)
	// OverlapsOnly: inside rapid.Check, where every drawn input runs a
	// whole check, only the overlaps run, unless WithBudget asks for more.
	OverlapsOnly bool
	Seed         uint64 // the scheduler's seed (Seed)
	All          bool   // ExploreAllInterleavings

	Wall *wall.Clock // nil: no bound
	// LeftOut records the overlaps kept of a job's points (the report's
	// "left out"), for the pair of one job ID.
	LeftOut func(overlaps, points int)

	Play  func(l L, s Scenario, ch sched.Chooser) (R, error) // plays s on lane l under ch
	Trace func(r R) *sched.Trace                             // what the scheduler did in a run
	Broke func(r R) bool                                     // whether a run broke a promise
	Token func(s Scenario) string                            // a scenario's token
	Usage func(err error) error                              // marks err as the user's mistake
}

// Run plays the concurrent scenarios: those of one job delivered twice at
// once (Pairs[0]), then the concurrent duplicates (Pairs[1]), each unless
// switched off; a concurrent token (Only) replays that one scenario.
func (c Check[L, R]) Run() ([]R, error) {
	if only := c.Only; only != "" {
		p := c.Pairs[0]
		if c.OnlyDuplicate {
			p = c.Pairs[1]
		}
		if why := c.Off.Pair(p); why != "" {
			return nil, c.Usage(fmt.Errorf("twice: cannot replay %q: this check switched %s off (%s)", only, p.What, why))
		}
		s, ch, err := ParseToken(only, c.Points)
		if err != nil {
			return nil, c.Usage(err)
		}
		sr, err := c.Play(c.Own, s, ch)
		if err != nil {
			return nil, err
		}
		return []R{sr}, nil
	}
	var pairs []Pair
	for _, p := range c.Pairs {
		if c.Off.Pair(p) != "" || (p.Duplicate && !c.Off.DuplicatesByDefault()) {
			continue
		}
		pairs = append(pairs, p)
	}
	n := len(c.Points)
	var out []R
	for i, p := range pairs {
		// The wall budget keeps room for the first scenario of every kind
		// of the pairs after this one (internal/wall).
		reserve := 0
		for _, q := range pairs[i+1:] {
			reserve += q.Kinds(n)
		}
		runs, err := c.explorePair(p, reserve)
		if err != nil {
			return nil, err
		}
		out = append(out, runs...)
	}
	if c.Wall != nil && len(out) == 0 && n > 0 && len(pairs) > 0 {
		c.Wall.NoneFit()
	}
	return out, nil
}

// explorePair plays the concurrent scenarios of one pair of deliveries and
// returns what it saw of each (internal/explore): first the named overlaps,
// then, unless the pair plays its overlaps only, the interleavings. With
// more than one lane the overlaps and the PCT samples play on every lane at
// once. Under a wall budget (internal/wall) reserve scenarios' time is kept
// for the kinds still to come.
func (c Check[L, R]) explorePair(p Pair, reserve int) ([]R, error) {
	points := c.Points
	n := len(points)
	if n == 0 {
		return nil, nil // nothing the attempts do can interleave
	}
	overlapPoints, budget, err := c.Budget(n)
	if err != nil {
		return nil, c.Usage(err)
	}
	overlaps := thin.KeepPoints(points, n-1, overlapPoints)
	if !p.Duplicate {
		c.LeftOut(len(overlaps), n-1)
	}
	return explore.Pair[L, R]{
		Own:   c.Own,
		Lanes: c.Lanes,
		N:     n,

		Overlaps:     overlaps,
		OverlapsOnly: p.OverlapsOnly || c.OverlapsOnly,
		Budget:       budget,
		Seed:         c.Seed,
		All:          c.All,

		Wall:    c.Wall,
		Reserve: reserve,

		Overlap: func(l L, k int) (R, error) {
			return c.Play(l, Scenario{Duplicate: p.Duplicate, Overlap: true, Point: k, Label: points[k-1].Label, Of: n}, sched.Overlap{K: k})
		},
		Interleave: func(l L, ch sched.Chooser) (R, error) {
			return c.Play(l, Scenario{Duplicate: p.Duplicate, Of: n}, ch)
		},
		Trace: c.Trace,
		Broke: c.Broke,
		OverlapToken: func(k int) string {
			return c.Token(Scenario{Duplicate: p.Duplicate, Overlap: true, Point: k})
		},
	}.Run()
}
