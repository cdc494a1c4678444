package twice

import (
	"strings"
	"testing"

	"github.com/twicekit/twicekit/internal/queue"
	"github.com/twicekit/twicekit/internal/scenarios"
)

// TestTheSchedulersWordsCoverEverySequentialKind: under InProcessScheduler
// no headline of a sequential kind speaks of a redelivery or a lost ack,
// so a kind whose words change cannot slip past the scheduler's words.
func TestTheSchedulersWordsCoverEverySequentialKind(t *testing.T) {
	for k := range scenarios.NumKinds {
		if !scenarios.Kind(k).Planned() {
			continue // the reference run; the concurrent kinds do not play under the scheduler
		}
		for _, s := range []Scenario{
			{Kind: ScenarioKind(k), Point: 2, Of: 3, After: 48 * 3600e9},
			{Kind: ScenarioKind(k), Point: 2, Of: 3, After: 48 * 3600e9, beforeAck: 2},
		} {
			said := queue.InProcessScheduler.Words(s.words("label"))
			for _, w := range []string{", then redelivery", "the ack was lost", "before the ack,"} {
				if strings.Contains(said, w) {
					t.Errorf("%s under InProcessScheduler says %q: %s", s.Token(), w, said)
				}
			}
		}
	}
}
