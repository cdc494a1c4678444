// Package thin chooses which points of a long job a budget plays: the first
// and the last, every transaction boundary, effect and explicit point, then
// others spread evenly between them (KeepPoints). LeftOut says in the
// report's words what a budget left out, and how to run it all.
//
// twice keeps the budgets themselves ([twice.Budget]) and plans the crash
// and overlap scenarios at the points kept.
package thin

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

// KeepPoints chooses, deterministically, at most limit of the points 1..n
// (more only when the anchors alone are more): the first and the last, every
// anchor, then others spread evenly between them. limit <= 0 keeps all.
func KeepPoints(steps []faults.Step, n, limit int) []int {
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

// LeftOut says what a budget left out of a long job, and how to run it all.
type LeftOut struct {
	Budget                  string
	Crashes, CrashPoints    int // crash points played, of how many
	Overlaps, OverlapPoints int
}

// Any reports whether the budget left out a crash or overlap point.
func (l LeftOut) Any() bool { return l.Crashes < l.CrashPoints || l.Overlaps < l.OverlapPoints }

func (l LeftOut) String() string {
	var parts []string
	if l.Crashes < l.CrashPoints {
		parts = append(parts, fmt.Sprintf("crashes before %d of %d points", l.Crashes, l.CrashPoints))
	}
	if l.Overlaps < l.OverlapPoints {
		parts = append(parts, fmt.Sprintf("overlaps at %d of %d points", l.Overlaps, l.OverlapPoints))
	}
	return fmt.Sprintf("the %s budget ran %s (transaction boundaries, effects, the first and last points, and others spread evenly); -twice.budget=thorough runs them all",
		l.Budget, strings.Join(parts, " and "))
}
