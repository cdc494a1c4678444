package checkrun

import (
	"github.com/twicekit/twicekit/internal/crashstates"
	"github.com/twicekit/twicekit/internal/scenarios"
	"github.com/twicekit/twicekit/internal/shard"
	"github.com/twicekit/twicekit/internal/wall"
)

// allOf lists the indexes of plan: the plan's order.
func allOf(plan []scenarios.Scenario) []int {
	order := make([]int, len(plan))
	for i := range order {
		order[i] = i
	}
	return order
}

// wallOrder is the order the sequential scenarios play in under a wall
// budget: every kind's first scenario before any kind's second
// (internal/wall spends the budget).
func wallOrder(plan []scenarios.Scenario) (firsts, rest []int) {
	kinds := make([]scenarios.Kind, len(plan))
	for i, s := range plan {
		kinds[i] = s.Kind
	}
	return wall.Order(kinds)
}

// crashPoints is, for each scenario, its point when it is a crash before
// that point, else 0 (crashstates.CoveredBy).
func crashPoints(plan []scenarios.Scenario) []int {
	out := make([]int, len(plan))
	for i, s := range plan {
		if s.Kind == scenarios.CrashBefore {
			out[i] = s.Point
		}
	}
	return out
}

// coveredBy is, for each planned scenario, the index of the earlier crash
// point that leaves the same world (-1: none, or not a crash point, or the
// cache is off), as the crash cache decides it.
func coveredBy(plan []scenarios.Scenario, prints *crashstates.Prints) []int {
	return crashstates.CoveredBy(crashPoints(plan), prints)
}

// keepShard keeps the planned scenarios that fall to the shard. A crash
// point covered by an earlier one (coveredBy) falls with it.
func keepShard(s shard.Shard, plan []scenarios.Scenario, coveredBy []int) []scenarios.Scenario {
	if s.N <= 1 {
		return plan
	}
	tokens := make([]string, len(plan))
	for i, sc := range plan {
		tokens[i] = sc.Token()
	}
	var out []scenarios.Scenario
	for _, i := range s.Keep(tokens, coveredBy) {
		out = append(out, plan[i])
	}
	return out
}
