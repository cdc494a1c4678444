package twice

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/faults"
)

// pointCaps is how many crash points and how many overlap points a check
// plays under each budget, and how many points (of both attempts together)
// the sampled interleavings may replay in all. thorough has no caps.
type pointCaps struct {
	crashes, overlaps, interleavedPoints int
}

func capsFor(b concurrent.Budget) (pointCaps, bool) {
	switch b.Name {
	case concurrent.Quick.Name:
		return pointCaps{crashes: 12, overlaps: 6, interleavedPoints: 1200}, true
	case concurrent.Default.Name:
		return pointCaps{crashes: 24, overlaps: 12, interleavedPoints: 4000}, true
	}
	return pointCaps{}, false
}

// anchorPoint reports whether a point is always kept when a budget thins
// the crash or overlap points: a transaction boundary, an effect or an
// explicit point.
func anchorPoint(s faults.Step) bool {
	if s.Kind != faults.SQL {
		return true
	}
	first, _, _ := strings.Cut(s.Label, " ")
	switch strings.ToUpper(strings.TrimSuffix(first, ";")) {
	case "BEGIN", "START", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE", "PREPARE":
		return true
	}
	return false
}

// keepPoints chooses, deterministically, at most limit of the points 1..n
// (more only when the anchors alone are more): the first and the last, every
// anchor, then others spread evenly between them. limit <= 0 keeps all.
func keepPoints(steps []faults.Step, n, limit int) []int {
	all := make([]int, 0, n)
	for i := 1; i <= n; i++ {
		all = append(all, i)
	}
	if limit <= 0 || n <= limit {
		return all
	}
	keep := map[int]bool{1: true, n: true}
	var others []int
	for i := 1; i <= n; i++ {
		if keep[i] {
			continue
		}
		if i <= len(steps) && anchorPoint(steps[i-1]) {
			keep[i] = true
			continue
		}
		others = append(others, i)
	}
	if m := limit - len(keep); m > 0 {
		for j := 0; j < m; j++ {
			keep[others[(2*j+1)*len(others)/(2*m)]] = true
		}
	}
	out := all[:0]
	for _, i := range all {
		if keep[i] {
			out = append(out, i)
		}
	}
	return out
}

// interleavingRuns bounds the sampled interleavings of two attempts of n
// points each so that they replay about caps.interleavedPoints points in
// all (at least 2 runs, at most the budget's).
func interleavingRuns(b concurrent.Budget, n int) int {
	caps, ok := capsFor(b)
	if !ok || n == 0 {
		return b.Runs
	}
	return min(b.Runs, max(2, caps.interleavedPoints/(2*n)))
}

// leftOut says what a budget left out of a long job, and how to run it all.
type leftOut struct {
	budget                  string
	crashes, crashPoints    int // crash points played, of how many
	overlaps, overlapPoints int
}

func (l leftOut) any() bool { return l.crashes < l.crashPoints || l.overlaps < l.overlapPoints }

func (l leftOut) String() string {
	var parts []string
	if l.crashes < l.crashPoints {
		parts = append(parts, fmt.Sprintf("crashes before %d of %d points", l.crashes, l.crashPoints))
	}
	if l.overlaps < l.overlapPoints {
		parts = append(parts, fmt.Sprintf("overlaps at %d of %d points", l.overlaps, l.overlapPoints))
	}
	return fmt.Sprintf("the %s budget ran %s (transaction boundaries, effects, the first and last points, and others spread evenly); -twice.budget=thorough runs them all",
		l.budget, strings.Join(parts, " and "))
}
