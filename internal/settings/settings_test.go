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

// The flag wins over the environment, and each says where it came from.
func TestShardAndParallelFlagElseEnvironment(t *testing.T) {
	t.Setenv("TWICE_SHARD", "2/3")
	t.Setenv("TWICE_PARALLEL", "4")
	if v, from := Shard(); v != "2/3" || from != "TWICE_SHARD" {
		t.Errorf("Shard() = %q, %q", v, from)
	}
	if v, from := Parallel(); v != "4" || from != "TWICE_PARALLEL" {
		t.Errorf("Parallel() = %q, %q", v, from)
	}
	*shardFlag, *parallelFlag = "1/4", "2"
	t.Cleanup(func() { *shardFlag, *parallelFlag = "", "" })
	if v, from := Shard(); v != "1/4" || from != "-twice.shard" {
		t.Errorf("Shard() with the flag = %q, %q", v, from)
	}
	if v, from := Parallel(); v != "2" || from != "-twice.parallel" {
		t.Errorf("Parallel() with the flag = %q, %q", v, from)
	}
}
