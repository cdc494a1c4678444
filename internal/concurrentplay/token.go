package concurrentplay

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/reportfmt"
	"github.com/twicekit/twicekit/internal/scenarios"
	"github.com/twicekit/twicekit/internal/sched"
)

// Scenario is one concurrent scenario, as twice names it (its Scenario).
type Scenario struct {
	Duplicate bool   // of the concurrent duplicates (Pair.Duplicate)
	Overlap   bool   // an overlap at Point, else an interleaving
	Point     int    // an overlap's point
	Label     string // the label of an overlap's point
	Of        int    // the concurrent points of each attempt
	Schedule  string // an interleaving's token, when given
}

// Scenario is the scenario as internal/scenarios describes it (twice's
// Scenario): its kind from whether it is a duplicate and an overlap.
func (s Scenario) Scenario() scenarios.Scenario {
	kind := map[[2]bool]scenarios.Kind{{false, true}: scenarios.Overlap, {false, false}: scenarios.Interleaved, {true, true}: scenarios.DuplicateOverlap, {true, false}: scenarios.DuplicateInterleaved}[[2]bool{s.Duplicate, s.Overlap}]
	return scenarios.Scenario{Kind: kind, Point: s.Point, Label: s.Label, Of: s.Of, Schedule: s.Schedule}
}

// ParseToken turns a replay token into its scenario and schedule. Its
// errors are the user's mistake in the check's options.
func ParseToken(token string, points []faults.Step) (Scenario, sched.Chooser, error) {
	if rest, ok := strings.CutPrefix(token, "duplicate-"); ok {
		s, ch, err := ParseToken(rest, points)
		s.Duplicate = true
		return s, ch, err
	}
	n := len(points)
	if rest, ok := strings.CutPrefix(token, "overlap@"); ok {
		k, err := strconv.Atoi(rest)
		if err != nil || k < 1 || k >= n {
			if n < 2 {
				return Scenario{}, nil, fmt.Errorf("twice: no concurrent scenario %q for this job: its reference run has %s, so it has no overlap scenarios (overlap@K pauses the first attempt after point K, 1 ≤ K < points)", token, reportfmt.Count(n, "point"))
			}
			return Scenario{}, nil, fmt.Errorf("twice: no concurrent scenario %q for this job: its reference run has %d points, so the overlaps are overlap@1 to overlap@%d", token, n, n-1)
		}
		return Scenario{Overlap: true, Point: k, Label: points[k-1].Label, Of: n}, sched.Overlap{K: k}, nil
	}
	rest, _ := strings.CutPrefix(token, "concurrent:")
	sch, err := sched.ParseSchedule(rest)
	if err != nil {
		return Scenario{}, nil, fmt.Errorf("twice: no concurrent scenario %q: %w", token, err)
	}
	if sch.Attempts() > 2 {
		return Scenario{}, nil, fmt.Errorf("twice: no concurrent scenario %q: the concurrent scenarios run two attempts, A and B", token)
	}
	return Scenario{Of: n, Schedule: sch.Token()}, sch, nil
}
