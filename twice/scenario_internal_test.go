package twice

import (
	"fmt"
	"testing"
	"time"

	"github.com/twicekit/twicekit/internal/scenarios"
)

// Every kind is played, and twice's kinds are internal/scenarios' kinds in
// the same order: each kind's name is the internal kind's of the same
// number, and a scenario converts there and back unchanged
// (internal/scenarios checks the names, tokens and words themselves).
func TestEveryKindIsPlayedAndAgreesWithInternalScenarios(t *testing.T) {
	// (internal/scenarios checks that its table of plays covers its kinds.)
	for k := range scenarios.NumKinds {
		kind := ScenarioKind(k)
		if _, ok := kind.play(); !ok {
			t.Errorf("kind %d: the table lacks its play", k)
			continue
		}
		if got, want := kind.String(), scenarios.Kind(k).String(); got != want || got == fmt.Sprintf("kind-%d", k) {
			t.Errorf("kind %d: twice names it %q, internal/scenarios %q", k, got, want)
		}
		s := Scenario{Kind: kind, Point: 2, Label: "SELECT 1", Of: 5, After: 48 * time.Hour, Schedule: "AB2A", afterAck: true, beforeAck: 3}
		if back := scenarioOf(s.internal()); back != s {
			t.Errorf("kind %s: %+v converts back as %+v", kind, s, back)
		}
		if got, want := s.Describe(), s.internal().Describe(); got != want {
			t.Errorf("kind %s: Describe() = %q, internal/scenarios says %q", kind, got, want)
		}
	}
	for name, k := range map[string]ScenarioKind{
		"once": Once, "ack-lost": AckLost, "crash-before": CrashBefore, "crash-after-last": CrashAfterLast,
		"duplicate-enqueue": DuplicateEnqueue, "crash-after-apply": CrashAfterApply, "reply-lost": ReplyLost,
		"late-redrive": Redrive, "concurrent": Interleaved, "overlap": Overlap, "duplicate-overlap": DuplicateOverlap,
		"duplicate-concurrent": DuplicateInterleaved, "statement-reply-lost": StatementReplyLost,
	} {
		if k.String() != name {
			t.Errorf("%d.String() = %q, want %q", int(k), k.String(), name)
		}
	}
	if got := (Scenario{Kind: ScenarioKind(scenarios.NumKinds)}).Token(); got != fmt.Sprintf("scenario(%d)", scenarios.NumKinds) {
		t.Errorf("a kind outside the table: Token() = %q", got)
	}
	if got := ScenarioKind(scenarios.NumKinds).String(); got != fmt.Sprintf("kind-%d", scenarios.NumKinds) {
		t.Errorf("a kind outside the table: String() = %q", got)
	}
}
