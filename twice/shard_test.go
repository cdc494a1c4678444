package twice_test

import (
	"slices"
	"testing"

	"github.com/twicekit/twicekit/twice"
)

// TestAReplayLinePlaysItsScenarioInEveryShard: a finding's replay line
// (-twice.run=TOKEN, here Only) plays its one scenario whatever shard the
// machine is, and every shard's finding prints the unsharded replay line.
func TestAReplayLinePlaysItsScenarioInEveryShard(t *testing.T) {
	job := loyaltyJob("increment", incrementPoints)
	whole := twice.Check(t.Context(), job, twice.WithoutConcurrency("a sequential bug"), twice.TestName("TestIncrement"))
	if whole.OK() || len(whole.Findings) == 0 {
		t.Fatalf("want the increment flagged, got:\n%s", whole.String())
	}
	var lines []string
	for k := 1; k <= 4; k++ {
		rep := twice.Check(t.Context(), job, twice.WithoutConcurrency("a sequential bug"), twice.TestName("TestIncrement"), twice.Shard(k, 4))
		for _, f := range rep.Findings {
			lines = append(lines, f.Token)
		}
		for _, f := range whole.Findings {
			only := twice.Check(t.Context(), job, twice.WithoutConcurrency("a sequential bug"), twice.Shard(k, 4), twice.Only(f.Token))
			if got := only.Tokens(); !slices.Equal(got, []string{f.Token}) || only.OK() {
				t.Fatalf("shard %d/4 replaying %s played %v (ok=%v), want that scenario, broken", k, f.Token, got, only.OK())
			}
		}
	}
	var want []string
	for _, f := range whole.Findings {
		want = append(want, f.Token)
	}
	slices.Sort(lines)
	slices.Sort(want)
	if !slices.Equal(lines, want) {
		t.Fatalf("the shards found %v, the whole check %v", lines, want)
	}
}
