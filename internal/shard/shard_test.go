package shard

import (
	"slices"
	"testing"
)

// TestEveryTokenFallsToOneShard: n shards together own every token once,
// and a covered point goes with the point that covers it.
func TestEveryTokenFallsToOneShard(t *testing.T) {
	tokens := []string{"once", "crash@1", "crash@2", "crash@3", "ack-lost", "crash@end"}
	covered := []int{-1, -1, 1, 1, -1, -1}
	seen := make([]int, len(tokens))
	for k := 1; k <= 3; k++ {
		s := Shard{K: k, N: 3}
		kept := s.Keep(tokens, covered)
		for _, i := range kept {
			seen[i]++
		}
		if slices.Contains(kept, 1) != slices.Contains(kept, 2) || slices.Contains(kept, 1) != slices.Contains(kept, 3) {
			t.Errorf("shard %s: crash@2 and crash@3 must go with crash@1: kept %v", s, kept)
		}
	}
	for i, n := range seen {
		if n != 1 {
			t.Errorf("%s played in %d shards, want 1", tokens[i], n)
		}
	}
}

func TestParse(t *testing.T) {
	if s, err := Parse("2/4"); err != nil || s != (Shard{K: 2, N: 4}) {
		t.Errorf("Parse(2/4) = %v, %v", s, err)
	}
	for _, bad := range []string{"", "2", "a/b", "0/4", "5/4"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): want an error", bad)
		}
	}
	if s, err := Resolve(nil, "", "TWICE_SHARD"); err != nil || s != (Shard{K: 1, N: 1}) {
		t.Errorf("Resolve with nothing set = %v, %v; want 1/1", s, err)
	}
	if _, err := Resolve(&Shard{K: 3, N: 2}, "", ""); err == nil || err.Error() != "twice: Shard(3, 2): shard k of n needs 1 ≤ k ≤ n (got k=3, n=2): give 1/2 to 2/2, one per machine of the CI matrix" {
		t.Errorf("Resolve(Shard(3, 2)): %v", err)
	}
}

// Setting: the flag, else TWICE_SHARD, named by where it came from.
func TestSettingIsTheFlagElseTheEnvironment(t *testing.T) {
	t.Setenv("TWICE_SHARD", "2/3")
	if v, from := Setting("1/4"); v != "1/4" || from != "-twice.shard" {
		t.Fatalf("the flag: got %q from %q", v, from)
	}
	if v, from := Setting(""); v != "2/3" || from != "TWICE_SHARD" {
		t.Fatalf("the environment: got %q from %q", v, from)
	}
}
