package twice

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/faults"
)

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
