package twice

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// DefaultWallBudget bounds one check's wall time unless WallBudget,
// -twice.wall or TWICE_WALL say otherwise: well inside go test's own
// default -timeout of 10 minutes, with room for the other tests of the
// package.
const DefaultWallBudget = 2 * time.Minute

var wallFlag = flag.String("twice.wall", "", "bound each twice check's wall time to this `duration` (default 2m): the scenarios play, every kind's first ones first, until it is spent, and a check that left any out fails unless twice.PartialCheck says why that is enough; env TWICE_WALL")

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
	return optionFunc(func(c *config) { c.wall = &d })
}

// PartialCheck declares that a check the wall budget cut short is enough
// for this test, and why. AssertIdempotent and ExpectIdempotent then pass
// it when it found nothing; its report still names what was left out, and
// the reason.
func PartialCheck(reason string) Option {
	return optionFunc(func(c *config) { c.partialOK = reason })
}

// wallBudget is the check's bound: the option, else -twice.wall, else
// TWICE_WALL, else DefaultWallBudget.
func (c *config) wallBudget() (time.Duration, error) {
	if c.wall != nil {
		return *c.wall, nil
	}
	s, from := *wallFlag, "-twice.wall"
	if s == "" {
		s, from = os.Getenv("TWICE_WALL"), "TWICE_WALL"
	}
	if s == "" {
		return DefaultWallBudget, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("twice: %s=%q is not a duration: give one such as 5m or 90s (0 for no bound)", from, s)
	}
	return d, nil
}

// wallClock is the wall budget as a check spends it. A nil *wallClock is
// no bound: every scenario has room.
type wallClock struct {
	budget   time.Duration
	deadline time.Time
	each     time.Duration // what a scenario costs, about: two clean runs
	lanes    int

	mu sync.Mutex
	// soft is when the concurrent scenarios stop widening, so that the
	// sequential scenarios still to play get their share (zero: deadline).
	soft time.Time
	// left lists the concurrent scenarios left out; cut says which
	// exploration was cut short, and after how many runs.
	left []string
	cut  []string
	// none: the concurrent scenarios had no room for their first one.
	none bool
}

// newWallClock starts the budget d at started, with a scenario costing
// about two clean runs of clean each.
func newWallClock(d time.Duration, started time.Time, clean time.Duration, lanes int) *wallClock {
	return &wallClock{budget: d, deadline: started.Add(d), each: max(2*clean, time.Millisecond), lanes: max(lanes, 1)}
}

// room reports whether a scenario started now ends within the budget,
// with reserve scenarios' time kept for later ones. A widening scenario
// (not its kind's first) keeps to the soft deadline too.
func (w *wallClock) room(reserve int, widening bool) bool {
	if w == nil {
		return true
	}
	end := w.deadline
	w.mu.Lock()
	if widening && !w.soft.IsZero() && w.soft.Before(end) {
		end = w.soft
	}
	w.mu.Unlock()
	return !time.Now().Add(w.each * time.Duration(1+reserve)).After(end)
}

// shareWith sets the soft deadline of the concurrent scenarios: they widen
// until what is left is the time of the sequential scenarios still to
// play (sequential of them), but never past half of what is left now.
func (w *wallClock) shareWith(sequential int) {
	if w == nil {
		return
	}
	if sequential == 0 {
		w.mu.Lock()
		w.soft = time.Time{}
		w.mu.Unlock()
		return
	}
	left := time.Until(w.deadline)
	need := w.each * time.Duration((sequential+w.lanes-1)/w.lanes)
	w.mu.Lock()
	w.soft = w.deadline.Add(-min(need, left/2))
	w.mu.Unlock()
}

// leaveOut records concurrent scenarios that had no room.
func (w *wallClock) leaveOut(tokens ...string) {
	w.mu.Lock()
	w.left = append(w.left, tokens...)
	w.mu.Unlock()
}

// cutShort records an exploration the budget stopped: what it is, and how
// many of its runs played.
func (w *wallClock) cutShort(what string, played int) {
	w.mu.Lock()
	w.cut = append(w.cut, fmt.Sprintf("%s: %s played before the wall budget ran out", what, count(played, "run")))
	w.mu.Unlock()
}

// noneFit records that no concurrent scenario had room: the report says
// so in one line, in place of naming each.
func (w *wallClock) noneFit() {
	w.mu.Lock()
	w.none, w.left, w.cut = true, nil, nil
	w.mu.Unlock()
}

// planLine is what -v says once the check knows its plan.
func (w *wallClock) planLine(job string, n int) string {
	return fmt.Sprintf("twice: %s: %s, about %s each", job, count(n, "scenario"), roundCost(w.each))
}

// leftText names the sequential scenarios (sequential) and the concurrent
// ones the budget left out or cut, in one line; "" when it left out none.
func (w *wallClock) leftText(sequential []string) string {
	if w == nil {
		return ""
	}
	left := append(append([]string{}, sequential...), w.left...)
	var parts []string
	if len(left) > 0 {
		parts = append(parts, fmt.Sprintf("left out %s: %s", count(len(left), "scenario"), strings.Join(left, ", ")))
	}
	if len(w.cut) > 0 {
		parts = append(parts, "cut "+strings.Join(w.cut, "; "))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("the wall budget (%s) %s (the scenarios played in rounds: every kind's first before any kind's second); %s",
		w.budget, strings.Join(parts, "; "), wallHint)
}

// wallHint says how to give a check more time.
const wallHint = "give the check room with TWICE_WALL=d, -twice.wall=d or twice.WallBudget(d)"

// concText says why none of the concurrent scenarios played; with hint, it
// says how to give them room too.
func (w *wallClock) concText(hint bool) string {
	s := fmt.Sprintf("the wall budget (%s) ran out before the first of them", w.budget)
	if hint {
		s += "; " + wallHint
	}
	return s
}

// wallOrder is the order the sequential scenarios play in under a wall
// budget: in rounds, each round the next scenario of every kind (in plan
// order within a kind), so that every kind plays its first scenario before
// any plays its second. firsts is the first round, rest the others.
func wallOrder(scenarios []Scenario) (firsts, rest []int) {
	var kindsSeen []ScenarioKind
	byKind := map[ScenarioKind][]int{}
	for i, s := range scenarios {
		if _, ok := byKind[s.Kind]; !ok {
			kindsSeen = append(kindsSeen, s.Kind)
		}
		byKind[s.Kind] = append(byKind[s.Kind], i)
	}
	for round := 0; ; round++ {
		any := false
		for _, k := range kindsSeen {
			if round < len(byKind[k]) {
				any = true
				if round == 0 {
					firsts = append(firsts, byKind[k][round])
				} else {
					rest = append(rest, byKind[k][round])
				}
			}
		}
		if !any {
			return firsts, rest
		}
	}
}

// roundCost rounds a cost for words: to 100 ms above a second, to the
// millisecond below.
func roundCost(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
