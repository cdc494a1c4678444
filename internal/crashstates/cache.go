package crashstates

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Cache decides which crash points a check plays: the first crash point of
// each world, and the others only when that first one broke a promise.
type Cache struct {
	prints  *Prints
	first   map[string]int // world -> the first crash point played that leaves it
	flagged map[int]bool   // crash points that broke a promise
	covered map[int][]int  // first crash point -> the crash points it covered
}

// NewCache is a cache over the worlds p fingerprinted (nil: every crash
// point is played).
func NewCache(p *Prints) *Cache {
	return &Cache{prints: p, first: map[string]int{}, flagged: map[int]bool{}, covered: map[int][]int{}}
}

// Skip reports whether the crash before point is covered by an earlier
// crash point that kept every promise; it records point as the first of
// its world otherwise.
func (cc *Cache) Skip(point int) bool {
	w := cc.prints.At(point)
	if w == "" {
		return false
	}
	k, seen := cc.first[w]
	if !seen {
		cc.first[w] = point
		return false
	}
	if cc.flagged[k] {
		return false
	}
	cc.covered[k] = append(cc.covered[k], point)
	return true
}

// Ran notes whether the crash before point broke a promise.
func (cc *Cache) Ran(point int, broke bool) {
	if broke {
		cc.flagged[point] = true
	}
}

// Covered is how many crash points were covered by others.
func (cc *Cache) Covered() int {
	n := 0
	for _, ps := range cc.covered {
		n += len(ps)
	}
	return n
}

// CoveredText says which crash points were covered by which, for the
// report; "" when none was.
func (cc *Cache) CoveredText() string {
	covered := cc.covered
	if len(covered) == 0 {
		return ""
	}
	reps := slices.Sorted(maps.Keys(covered))
	var parts []string
	n := 0
	for _, k := range reps {
		var ts []string
		for _, p := range covered[k] {
			ts = append(ts, fmt.Sprintf("crash@%d", p))
			n++
		}
		parts = append(parts, fmt.Sprintf("%s by crash@%d", strings.Join(ts, ", "), k))
	}
	what := fmt.Sprintf("%d crash points not replayed: they leave", n)
	if n == 1 {
		what = "1 crash point not replayed: it leaves"
	}
	return fmt.Sprintf("%s the same rows, sequences and effects as an earlier one that kept every promise (%s); twice.EveryCrashPoint() replays them",
		what, strings.Join(parts, "; "))
}

// CoveredBy is, for each scenario of a plan, the index of the earlier crash
// point that leaves the same world (-1: none, or not a crash point, or the
// cache is off), as Cache decides it. crashPoints[i] is the point of the
// plan's i-th scenario when it is a crash before that point, else 0.
func CoveredBy(crashPoints []int, prints *Prints) []int {
	out := make([]int, len(crashPoints))
	first := map[string]int{}
	for i, point := range crashPoints {
		out[i] = -1
		if prints == nil || point == 0 {
			continue
		}
		w := prints.At(point)
		if w == "" {
			continue
		}
		if k, seen := first[w]; seen {
			out[i] = k
			continue
		}
		first[w] = i
	}
	return out
}
