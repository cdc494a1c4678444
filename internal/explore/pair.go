// Package explore plays the concurrent scenarios of one pair of
// deliveries: first the overlaps (the first attempt pauses after point k,
// the second runs to the end, the first resumes), then, unless the pair
// plays its overlaps only, every distinct interleaving when they fit the
// budget, or PCT samples when they do not. Each interleaving is kept once.
// Unless told to explore them all, it stops at the first scenario that
// breaks a promise.
//
// With more than one lane the overlaps and the PCT samples play on every
// lane at once and are taken in order, as the serial loop takes them, so
// the same ones are kept and the same stop is made; an enumeration, which
// picks each interleaving from the last, plays on the check's own lane
// alone. Under a wall budget each kind's first scenario plays while it fits
// in the budget, and the later ones while they fit with reserve scenarios'
// time kept for the kinds still to come; what does not fit is recorded as
// left out or cut.
//
// twice hands in how to play one scenario on a lane and what it made of
// it; it keeps the scenarios, their runs and their comparison.
package explore

import (
	"errors"
	"sync"

	"github.com/twicekit/twicekit/internal/inorder"
	"github.com/twicekit/twicekit/internal/sched"
	"github.com/twicekit/twicekit/internal/wall"
)

// Pair is one pair of deliveries to explore, on lanes of type L, each
// scenario played making a run of type R.
type Pair[L, R any] struct {
	Own   L   // the check's own lane: the serial loop and the enumeration play on it
	Lanes []L // every lane, Own first; more than one plays at once
	N     int // the concurrent points of each attempt

	Overlaps     []int        // the overlap points kept
	OverlapsOnly bool         // play no interleaving
	Budget       sched.Budget // the interleavings' budget
	Seed         uint64       // the scheduler's seed
	All          bool         // keep exploring past a scenario that broke a promise

	Wall    *wall.Clock // nil: no bound
	Reserve int         // scenarios' time the wall budget keeps for the pairs after this one

	Overlap      func(l L, k int) (R, error)            // plays the overlap at point k
	Interleave   func(l L, ch sched.Chooser) (R, error) // plays an interleaving chosen by ch
	Trace        func(r R) *sched.Trace                 // what the scheduler did in a run
	Broke        func(r R) bool                         // whether a run broke a promise
	OverlapToken func(k int) string                     // the token of the overlap at k, for what the wall budget left out
}

// errNoRoom is what a concurrent scenario the wall budget has no room for
// returns in place of its run.
var errNoRoom = errors.New("twice: no room in the wall budget")

// Run plays the pair's scenarios and returns the runs it kept, in order.
func (p Pair[L, R]) Run() ([]R, error) {
	var out []R
	seen := map[string]bool{}
	stop := false
	keep := func(sr R) {
		seen[p.Trace(sr).Token()] = true
		out = append(out, sr)
		if !p.All && p.Broke(sr) {
			stop = true
		}
	}
	interleavings := 0 // the kinds after the overlaps that keep room
	if !p.OverlapsOnly {
		interleavings = 1
	}
	overlap := func(l L, i int) (R, error) {
		k := p.Overlaps[i]
		if widening := i > 0; widening && !p.Wall.Room(p.Reserve+interleavings, true) || !widening && !p.Wall.Room(0, false) {
			var none R
			return none, errNoRoom
		}
		return p.Overlap(l, k)
	}
	leftFrom := -1 // the first overlap the wall budget had no room for
	var playErr error
	if len(p.Lanes) > 1 {
		inorder.Play(p.Lanes, len(p.Overlaps), overlap, func(i int, sr R, err error) bool {
			if errors.Is(err, errNoRoom) {
				leftFrom = i
				return false
			}
			if err != nil {
				playErr = err
				return false
			}
			keep(sr)
			return !stop
		})
	} else {
		for i := range p.Overlaps {
			if stop {
				break
			}
			sr, err := overlap(p.Own, i)
			if errors.Is(err, errNoRoom) {
				leftFrom = i
				break
			}
			if err != nil {
				playErr = err
				break
			}
			keep(sr)
		}
	}
	if playErr != nil {
		return nil, playErr
	}
	if leftFrom >= 0 && !stop {
		for _, k := range p.Overlaps[leftFrom:] {
			p.Wall.LeaveOut(p.OverlapToken(k))
		}
	}
	if stop || p.OverlapsOnly {
		return out, nil
	}
	// The interleavings under the wall budget: the first while it fits,
	// the others while they fit with room kept for the kinds to come.
	interleaved, cut := 0, false
	roomFor := func() bool {
		if cut {
			return false
		}
		if interleaved == 0 && p.Wall.Room(0, false) || interleaved > 0 && p.Wall.Room(p.Reserve, true) {
			interleaved++
			return true
		}
		cut = true
		p.Wall.CutShort("the interleavings", interleaved)
		return false
	}
	n, eb := p.N, p.Budget
	if len(p.Lanes) > 1 && eb.Runs >= 1 && eb.Choose(n, n) == sched.Sample {
		sampler, draws := sched.NewSampler(eb, p.Seed, []int{n, n})
		var roomMu sync.Mutex
		inorder.Play(p.Lanes, len(draws), func(l L, i int) (R, error) {
			roomMu.Lock()
			ok := roomFor()
			roomMu.Unlock()
			if !ok {
				var none R
				return none, errNoRoom
			}
			return p.Interleave(l, draws[i])
		}, func(_ int, sr R, err error) bool {
			if errors.Is(err, errNoRoom) {
				return false
			}
			if err != nil {
				playErr = err
				return false
			}
			t := p.Trace(sr)
			if !seen[t.Token()] {
				keep(sr)
				if stop {
					return false
				}
			}
			return sampler.Next(t)
		})
		if playErr != nil {
			return nil, playErr
		}
		return out, nil
	}
	_, err := sched.Explore(eb, p.Seed, []int{n, n}, func(ch sched.Chooser) (*sched.Trace, error) {
		if !roomFor() {
			return nil, sched.Stop
		}
		sr, err := p.Interleave(p.Own, ch)
		if err != nil {
			return nil, err
		}
		t := p.Trace(sr)
		if seen[t.Token()] {
			return t, nil
		}
		keep(sr)
		if stop {
			return t, sched.Stop
		}
		return t, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
