package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Every kind is described once, and every scenario's token reads back as
// the same scenario.
func TestEveryKindRoundTripsThroughItsToken(t *testing.T) {
	examples := map[Kind]Scenario{
		Once:             {Kind: Once},
		AckLost:          {Kind: AckLost},
		CrashBefore:      {Kind: CrashBefore, Point: 3},
		CrashAfterLast:   {Kind: CrashAfterLast},
		DuplicateEnqueue: {Kind: DuplicateEnqueue},
		CrashAfterApply:  {Kind: CrashAfterApply, Point: 2},
		ReplyLost:        {Kind: ReplyLost, Point: 12},
		Redrive:          {Kind: Redrive, Point: 2, After: 48 * time.Hour},
		Interleaved:      {Kind: Interleaved, Schedule: "A2B3A"},
		Overlap:          {Kind: Overlap, Point: 1},

		DuplicateOverlap:     {Kind: DuplicateOverlap, Point: 2},
		DuplicateInterleaved: {Kind: DuplicateInterleaved, Schedule: "AB2A"},
		StatementReplyLost:   {Kind: StatementReplyLost, Point: 4},
	}
	if len(examples) != len(kinds) {
		t.Fatalf("the test covers %d kinds, the table has %d: add the new kind here", len(examples), len(kinds))
	}
	names := map[string]Kind{}
	for k := range kinds {
		kind := Kind(k)
		d, ok := kind.spec()
		if !ok || d.name == "" || d.words == nil {
			t.Errorf("kind %d: the table lacks its name, token or words", k)
			continue
		}
		if other, dup := names[d.name]; dup {
			t.Errorf("kinds %d and %d are both named %q", other, k, d.name)
		}
		names[d.name] = kind
		s, ok := examples[kind]
		if !ok {
			t.Errorf("kind %s has no example scenario in this test", kind)
			continue
		}
		tok := s.Token()
		back, err := ParseToken(tok)
		if err != nil {
			t.Errorf("%s: token %q does not read back: %v", kind, tok, err)
			continue
		}
		if back != s {
			t.Errorf("%s: token %q reads back as %+v, want %+v", kind, tok, back, s)
		}
		s.Of, s.Label = 5, "SELECT 1"
		if w := s.Describe(); w == "" || strings.Contains(w, "scenario(") {
			t.Errorf("%s: Describe() = %q", kind, w)
		}
	}
	if got := (Scenario{Kind: Kind(len(kinds))}).Token(); got != fmt.Sprintf("scenario(%d)", len(kinds)) {
		t.Errorf("a kind outside the table: Token() = %q", got)
	}
}

func TestTokensThatAreNotScenarios(t *testing.T) {
	for _, tok := range []string{"", "crash@0", "crash@x", "crash@-1", "crash@01", "overlap@", "concurrent:", "redrive-48h", "redrive-x@2", "twice", "crash-after@", "duplicate-overlap@0", "duplicate-concurrent:"} {
		if s, err := ParseToken(tok); err == nil {
			t.Errorf("ParseToken(%q) = %+v, want an error", tok, s)
		}
	}
}

// Every kind is played: the table of plays lists the kinds the table kinds
// describes.
func TestEveryKindIsPlayed(t *testing.T) {
	if len(plays) != NumKinds {
		t.Fatalf("the plays table plays %d kinds, the kinds table describes %d", len(plays), NumKinds)
	}
	for k := range plays {
		if !Kind(k).Playable() {
			t.Errorf("kind %d: the table lacks its play", k)
		}
	}
	if Kind(len(plays)).Playable() || Kind(-1).Playable() {
		t.Error("a kind outside the table is playable")
	}
}
