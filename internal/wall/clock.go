package wall

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twicekit/twicekit/internal/reportfmt"
)

// Clock is the wall budget as a check spends it. A nil *Clock is no bound:
// every scenario has room.
type Clock struct {
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

// New starts the budget d at started, with a scenario costing about two
// clean runs of clean each, played on lanes lanes.
func New(d time.Duration, started time.Time, clean time.Duration, lanes int) *Clock {
	return &Clock{budget: d, deadline: started.Add(d), each: max(2*clean, time.Millisecond), lanes: max(lanes, 1)}
}

// Budget is the bound the clock spends.
func (w *Clock) Budget() time.Duration { return w.budget }

// Room reports whether a scenario started now ends within the budget,
// with reserve scenarios' time kept for later ones. A widening scenario
// (not its kind's first) keeps to the soft deadline too.
func (w *Clock) Room(reserve int, widening bool) bool {
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

// ShareWith sets the soft deadline of the concurrent scenarios: they widen
// until what is left is the time of the sequential scenarios still to
// play (sequential of them), but never past half of what is left now.
func (w *Clock) ShareWith(sequential int) {
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

// LeaveOut records concurrent scenarios that had no room.
func (w *Clock) LeaveOut(tokens ...string) {
	w.mu.Lock()
	w.left = append(w.left, tokens...)
	w.mu.Unlock()
}

// CutShort records an exploration the budget stopped: what it is, and how
// many of its runs played.
func (w *Clock) CutShort(what string, played int) {
	w.mu.Lock()
	w.cut = append(w.cut, fmt.Sprintf("%s: %s played before the wall budget ran out", what, reportfmt.Count(played, "run")))
	w.mu.Unlock()
}

// NoneFit records that no concurrent scenario had room: the report says
// so in one line, in place of naming each.
func (w *Clock) NoneFit() {
	w.mu.Lock()
	w.none, w.left, w.cut = true, nil, nil
	w.mu.Unlock()
}

// NoneFitted reports whether no concurrent scenario had room (NoneFit).
func (w *Clock) NoneFitted() bool { return w.none }

// Shortened reports whether the budget left out a concurrent scenario or
// cut an exploration short.
func (w *Clock) Shortened() bool { return len(w.cut)+len(w.left) > 0 }

// PlanLine is what -v says once the check knows its plan of n scenarios.
func (w *Clock) PlanLine(job string, n int) string {
	return fmt.Sprintf("twice: %s: %s, about %s each", job, reportfmt.Count(n, "scenario"), roundCost(w.each))
}

// LeftText names the sequential scenarios (sequential) and the concurrent
// ones the budget left out or cut, in one line; "" when it left out none.
func (w *Clock) LeftText(sequential []string) string {
	if w == nil {
		return ""
	}
	left := append(append([]string{}, sequential...), w.left...)
	var parts []string
	if len(left) > 0 {
		parts = append(parts, fmt.Sprintf("left out %s: %s", reportfmt.Count(len(left), "scenario"), strings.Join(left, ", ")))
	}
	if len(w.cut) > 0 {
		parts = append(parts, "cut "+strings.Join(w.cut, "; "))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("the wall budget (%s) %s (the scenarios played in rounds: every kind's first before any kind's second); %s",
		w.budget, strings.Join(parts, "; "), Hint)
}

// Hint says how to give a check more time.
const Hint = "give the check room with TWICE_WALL=d, -twice.wall=d or twice.WallBudget(d)"

// ConcText says why none of the concurrent scenarios played; with hint, it
// says how to give them room too.
func (w *Clock) ConcText(hint bool) string {
	s := fmt.Sprintf("the wall budget (%s) ran out before the first of them", w.budget)
	if hint {
		s += "; " + Hint
	}
	return s
}

// roundCost rounds a cost for words: to 100 ms above a second, to the
// millisecond below.
func roundCost(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
