package twice

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// DefaultWallBudget bounds one check's wall time unless WallBudget,
// -twice.wall or TWICE_WALL say otherwise: well inside go test's own
// default -timeout of 10 minutes, with room for the other tests of the
// package.
const DefaultWallBudget = 2 * time.Minute

var wallFlag = flag.String("twice.wall", "", "bound each twice check's wall time to this `duration` (default 2m): once the reference run shows what a scenario costs, the scenarios that would not fit are left out and named; env TWICE_WALL")

// WallBudget bounds the check's wall time to d (DefaultWallBudget when not
// given; -twice.wall and TWICE_WALL set it for every check). After the
// reference run the check knows what a scenario costs (about two clean
// runs); when its scenarios would not all fit in what is left of d, it
// plays those that fit, chosen as the point budgets choose crash points
// (transaction boundaries, effects, the first and last points, others
// spread evenly), and the report names the ones it left out. The
// concurrent scenarios are left out, and said so, when they would not fit
// after them. d <= 0 means no bound.
func WallBudget(d time.Duration) Option {
	return optionFunc(func(c *config) { c.wall = &d })
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

// wallPlan is what the wall budget made of a check's plan.
type wallPlan struct {
	each   time.Duration // what a scenario costs, about
	left   []string      // the tokens left out
	noConc bool          // the concurrent scenarios left out too
	budget time.Duration
}

// fitWall keeps the scenarios that fit in what is left of the wall budget
// (spent so far: spent; a clean run took clean; lanes play at once), in the
// point budgets' order. concurrentRuns is how many runs the concurrent
// scenarios would take (0: none planned).
func fitWall(scenarios []Scenario, steps int, budget, spent, clean time.Duration, lanes, concurrentRuns int, keep func(limit int) map[int]bool) ([]Scenario, wallPlan) {
	each := max(2*clean, time.Millisecond)
	wp := wallPlan{each: each, budget: budget}
	if budget <= 0 {
		return scenarios, wp
	}
	fit := int((budget - spent) / each * time.Duration(max(lanes, 1)))
	if fit >= len(scenarios) {
		rest := budget - spent - time.Duration((len(scenarios)+lanes-1)/max(lanes, 1))*each
		wp.noConc = concurrentRuns > 0 && rest < time.Duration(concurrentRuns)*each
		return scenarios, wp
	}
	fit = max(fit, 0)
	kept := scenarios
	for limit := steps; limit >= 1 && len(kept) > fit; limit-- {
		points := keep(limit)
		kept = kept[:0:0]
		for _, s := range scenarios {
			if s.Kind == CrashBefore && !points[s.Point] {
				continue
			}
			kept = append(kept, s)
		}
	}
	if len(kept) > fit {
		kept = kept[:fit:fit]
	}
	in := map[string]bool{}
	for _, s := range kept {
		in[s.Token()] = true
	}
	for _, s := range scenarios {
		if !in[s.Token()] {
			wp.left = append(wp.left, s.Token())
		}
	}
	wp.noConc = concurrentRuns > 0
	return kept, wp
}

// planLine is what -v says once the check knows its plan.
func (wp wallPlan) planLine(job string, n int) string {
	return fmt.Sprintf("twice: %s: %s, about %s each", job, count(n, "scenario"), roundCost(wp.each))
}

// leftText names what the wall budget left out, and how to give it more.
func (wp wallPlan) leftText() string {
	if len(wp.left) == 0 {
		return ""
	}
	return fmt.Sprintf("the wall budget (%s) left out %s: %s (played: those the point budgets keep first); give the check more time with twice.WallBudget(d) or -twice.wall=d",
		wp.budget, count(len(wp.left), "scenario"), strings.Join(wp.left, ", "))
}

// concText says why the concurrent scenarios were left out.
func (wp wallPlan) concText() string {
	return fmt.Sprintf("the wall budget (%s) leaves no room for them; give the check more time with twice.WallBudget(d) or -twice.wall=d", wp.budget)
}

// roundCost rounds a cost for words: to 100 ms above a second, to the
// millisecond below.
func roundCost(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// outOfWall reports whether a scenario started now would end past the
// wall budget.
func (c *checker) outOfWall() bool {
	return !c.wallDeadline.IsZero() && time.Now().Add(c.wallEach).After(c.wallDeadline)
}
