package checkrun

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/scenarios"
)

// TestWallOrderPlaysEveryKindsFirstScenarioFirst: under a wall budget the
// sequential scenarios play in rounds, each kind's next one a round, in
// plan order within a kind.
func TestWallOrderPlaysEveryKindsFirstScenarioFirst(t *testing.T) {
	plan := []scenarios.Scenario{
		{Kind: scenarios.AckLost},
		{Kind: scenarios.CrashBefore, Point: 1}, {Kind: scenarios.CrashBefore, Point: 2}, {Kind: scenarios.CrashBefore, Point: 3},
		{Kind: scenarios.CrashAfterLast},
		{Kind: scenarios.DuplicateEnqueue},
		{Kind: scenarios.CrashAfterApply, Point: 2}, {Kind: scenarios.ReplyLost, Point: 2},
		{Kind: scenarios.CrashAfterApply, Point: 3}, {Kind: scenarios.ReplyLost, Point: 3},
	}
	firsts, rest := wallOrder(plan)
	tokens := func(order []int) []string {
		var out []string
		for _, i := range order {
			out = append(out, plan[i].Token())
		}
		return out
	}
	require.Equal(t, []string{"sequential", "crash@1", "crash@end", "duplicate-enqueue", "crash-after@2", "reply-lost@2"}, tokens(firsts))
	require.Equal(t, []string{"crash@2", "crash-after@3", "reply-lost@3", "crash@3"}, tokens(rest))
}
