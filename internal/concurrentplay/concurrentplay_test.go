package concurrentplay

import (
	"errors"
	"strings"
	"testing"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/scenarios"
	"github.com/twicekit/twicekit/internal/sched"
)

func steps(labels ...string) []faults.Step {
	var out []faults.Step
	for i, l := range labels {
		out = append(out, faults.Step{Index: i + 1, Kind: faults.SQL, Label: l})
	}
	return out
}

// A token names its scenario and its schedule; a wrong one says what the
// job's tokens are.
func TestParseToken(t *testing.T) {
	points := steps("SELECT 1", "INSERT", "COMMIT")
	s, ch, err := ParseToken("overlap@2", points)
	if err != nil || s != (Scenario{Overlap: true, Point: 2, Label: "INSERT", Of: 3}) || ch != (sched.Overlap{K: 2}) {
		t.Fatalf("overlap@2: %+v %v %v", s, ch, err)
	}
	s, _, err = ParseToken("duplicate-overlap@1", points)
	if err != nil || s != (Scenario{Duplicate: true, Overlap: true, Point: 1, Label: "SELECT 1", Of: 3}) {
		t.Fatalf("duplicate-overlap@1: %+v %v", s, err)
	}
	s, ch, err = ParseToken("concurrent:A2B3A", points)
	if err != nil || s != (Scenario{Of: 3, Schedule: "A2B3A"}) || ch == nil {
		t.Fatalf("concurrent:A2B3A: %+v %v", s, err)
	}
	s, _, err = ParseToken("duplicate-concurrent:A2B3A", points)
	if err != nil || s != (Scenario{Duplicate: true, Of: 3, Schedule: "A2B3A"}) {
		t.Fatalf("duplicate-concurrent:A2B3A: %+v %v", s, err)
	}
	for token, want := range map[string]string{
		"overlap@3":          "so the overlaps are overlap@1 to overlap@2",
		"overlap@x":          "so the overlaps are overlap@1 to overlap@2",
		"concurrent:A2B2C1":  "the concurrent scenarios run two attempts, A and B",
		"concurrent:nothing": `no concurrent scenario "concurrent:nothing": `,
	} {
		if _, _, err := ParseToken(token, points); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", token, want, err)
		}
	}
	if _, _, err := ParseToken("overlap@1", steps("SELECT 1")); err == nil || !strings.Contains(err.Error(), "its reference run has 1 point, so it has no overlap scenarios") {
		t.Errorf("overlap@1 of one point: %v", err)
	}
}

// An autocommit statement is followed by the point of its implicit commit,
// unless that is switched off.
func TestPoints(t *testing.T) {
	ref := steps("SELECT 1", "INSERT")
	ref[1].Implicit = true
	got := Points(ref)
	if len(got) != 3 || got[2].Index != 3 || got[2].Kind != faults.SQL || got[1].Label != "INSERT" || got[2].Label == "INSERT" {
		t.Fatalf("points: %+v", got)
	}
	ImplicitTxOff.Store(true)
	defer ImplicitTxOff.Store(false)
	if got := Points(ref); len(got) != 2 {
		t.Fatalf("without implicit transactions: %+v", got)
	}
}

// Each option switches off what it says; the duplicates play by default
// only where one job ID's overlaps do not.
func TestOff(t *testing.T) {
	same, dup := Pair{What: "same"}, Pair{Duplicate: true, OverlapsOnly: true}
	for _, c := range []struct {
		off       Off
		same, dup string
		byDefault bool
	}{
		{Off{}, "", "", false},
		{Off{Concurrency: "locked"}, "locked", "locked", false},
		{Off{Overlaps: "leased"}, "leased", "", true},
		{Off{DuplicateQueue: "unique"}, "", "unique", false},
		{Off{Duplicates: true}, "", "", true},
	} {
		if c.off.Pair(same) != c.same || c.off.Pair(dup) != c.dup || c.off.DuplicatesByDefault() != c.byDefault {
			t.Errorf("%+v: %q %q %v", c.off, c.off.Pair(same), c.off.Pair(dup), c.off.DuplicatesByDefault())
		}
	}
	if same.Kinds(0) != 0 || same.Kinds(1) != 1 || same.Kinds(5) != 2 || dup.Kinds(1) != 0 || dup.Kinds(5) != 1 {
		t.Error("kinds")
	}
	if Seed(0) != 1 || Seed(7) != 7 {
		t.Error("seed")
	}
}

// New workers name their sessions and set their isolation level; the check's
// own is reused as the first when told.
func TestWorkers(t *testing.T) {
	params := map[string]string{"search_path": "app"}
	var made []map[string]string
	mk := func(p map[string]string) (int, error) { made = append(made, p); return len(made), nil }
	ws, names, err := Workers(0, true, params, 0, mk)
	if err != nil || ws != [2]int{0, 1} || names != [2]string{"", "twice-attempt-B"} || made[0]["search_path"] != "app" || made[0]["application_name"] != "twice-attempt-B" || made[0]["default_transaction_isolation"] != "" {
		t.Fatalf("reused: %v %v %v %v", ws, names, made, err)
	}
	made = nil
	ws, names, err = Workers(0, false, params, 2, mk)
	if err != nil || ws != [2]int{1, 2} || names != [2]string{"twice-attempt-A", "twice-attempt-B"} || made[0]["default_transaction_isolation"] != "serializable" || len(params) != 1 {
		t.Fatalf("new: %v %v %v %v", ws, names, made, err)
	}
	boom := errors.New("boom")
	if _, _, err := Workers(0, false, params, 0, func(map[string]string) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("error: %v", err)
	}
	if Isolation(0) != "READ COMMITTED" || Isolation(1) != "REPEATABLE READ" || Isolation(3) != "isolation(3)" {
		t.Error("isolation")
	}
	if WorkersNeeded(false, true) != 1 || WorkersNeeded(true, true) != 2 || WorkersNeeded(true, false) != 3 {
		t.Error("workers needed")
	}
}

// A concurrent scenario's kind is internal/scenarios' from whether it is a
// duplicate and an overlap, and its token reads back as the same scenario.
func TestScenarioKinds(t *testing.T) {
	for s, kind := range map[Scenario]scenarios.Kind{
		{Overlap: true, Point: 2, Label: "SELECT 1", Of: 3}: scenarios.Overlap,
		{Schedule: "A2B", Of: 3}:                            scenarios.Interleaved,
		{Duplicate: true, Overlap: true, Point: 1, Of: 3}:   scenarios.DuplicateOverlap,
		{Duplicate: true, Schedule: "AB", Of: 3}:            scenarios.DuplicateInterleaved,
	} {
		got := s.Scenario()
		if got.Kind != kind || got.Point != s.Point || got.Label != s.Label || got.Of != s.Of || got.Schedule != s.Schedule {
			t.Errorf("%+v: Scenario() = %+v, want kind %s", s, got, kind)
		}
	}
	if SameJob.Duplicate || SameJob.Jobs != [2]string{"job-1", "job-1"} || !DuplicateJobs.Duplicate || DuplicateJobs.Jobs != [2]string{"job-1", "job-2"} {
		t.Errorf("the pairs: %+v, %+v", SameJob, DuplicateJobs)
	}
}
