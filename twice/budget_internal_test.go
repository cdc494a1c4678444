package twice

import (
	"strings"
	"testing"
)

func TestBudgetsHaveOneVocabulary(t *testing.T) {
	for _, b := range Budgets() {
		got, err := ParseBudget(b.Name)
		if err != nil || got != b {
			t.Errorf("ParseBudget(%q) = %+v, %v; want %+v", b.Name, got, err, b)
		}
	}
	if _, err := ParseBudget("huge"); err == nil || err.Error() != `twice: unknown budget "huge": use one of quick, default, thorough` {
		t.Errorf("ParseBudget(huge): %v", err)
	}
	cfg := newConfig([]Option{WithBudget(Budget{Name: "bad", CrashPoints: -1})})
	if _, err := cfg.resolveBudget(); err == nil || !strings.Contains(err.Error(), `budget "bad" has a negative cap`) {
		t.Errorf("a negative cap: %v", err)
	}
}

func TestBudgetBoundsTheSampledInterleavings(t *testing.T) {
	if got := QuickBudget.explore(300).Runs; got != 2 {
		t.Errorf("quick, 300 points: %d runs, want 2 (1200 points / 600 a run, at least 2)", got)
	}
	if got := DefaultBudget.explore(10).Runs; got != 100 {
		t.Errorf("default, 10 points: %d runs, want the budget's 100", got)
	}
	if got := ThoroughBudget.explore(300).Runs; got != 1000 {
		t.Errorf("thorough, 300 points: %d runs, want all 1000", got)
	}
	if got := (Budget{Name: "mine", Interleavings: 7}).explore(5); got.Depth != 3 || got.Runs != 7 {
		t.Errorf("a budget without a depth: %+v, want depth 3 and 7 runs", got)
	}
	if got := (Budget{Name: "crashes only", CrashPoints: 50}).explore(5); got.Runs != 100 {
		t.Errorf("a budget without Interleavings: %+v, want the default's 100 runs", got)
	}
}
