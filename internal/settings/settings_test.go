package settings

import (
	"testing"
	"time"
)

func TestWallFromTheEnvironment(t *testing.T) {
	t.Setenv("TWICE_WALL", "")
	if d, err := Wall(2 * time.Minute); err != nil || d != 2*time.Minute {
		t.Errorf("unset: %v, %v; want the default", d, err)
	}
	t.Setenv("TWICE_WALL", "90s")
	if d, err := Wall(2 * time.Minute); err != nil || d != 90*time.Second {
		t.Errorf("TWICE_WALL=90s: %v, %v", d, err)
	}
	t.Setenv("TWICE_WALL", "soon")
	if _, err := Wall(2 * time.Minute); err == nil || err.Error() != `twice: TWICE_WALL="soon" is not a duration: give one such as 5m or 90s (0 for no bound)` {
		t.Errorf("TWICE_WALL=soon: %v", err)
	}
}

func TestBudgetFromTheEnvironment(t *testing.T) {
	t.Setenv("TWICE_BUDGET", "quick")
	if name, from := Budget(); name != "quick" || from != "TWICE_BUDGET" {
		t.Errorf("Budget() = %q, %q", name, from)
	}
}
