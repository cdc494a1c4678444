package shard

import (
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"
)

// Shard is shard K of N.
type Shard struct{ K, N int }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// ConcurrentToken is what the concurrent scenarios are sharded by.
const ConcurrentToken = "concurrent"

// Owns reports whether a scenario of this token falls to this shard.
func (s Shard) Owns(token string) bool {
	if s.N <= 1 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(token))
	return int(h.Sum32()%uint32(s.N)) == s.K-1
}

// Setting is the shard's setting: flag (-twice.shard), else TWICE_SHARD,
// with where it came from.
func Setting(flag string) (value, from string) {
	if flag != "" {
		return flag, "-twice.shard"
	}
	return os.Getenv("TWICE_SHARD"), "TWICE_SHARD"
}

// Resolve is the option (nil: none), else value, the setting named from
// (-twice.shard or TWICE_SHARD), else 1/1 (everything).
func Resolve(option *Shard, value, from string) (Shard, error) {
	if option != nil {
		if err := option.Validate(); err != nil {
			return Shard{}, fmt.Errorf("twice: Shard(%d, %d): %w", option.K, option.N, err)
		}
		return *option, nil
	}
	if value == "" {
		return Shard{K: 1, N: 1}, nil
	}
	s, err := Parse(value)
	if err != nil {
		return Shard{}, fmt.Errorf("twice: %s=%s: %w", from, value, err)
	}
	return s, nil
}

// Parse reads "k/n".
func Parse(v string) (Shard, error) {
	ks, ns, ok := strings.Cut(v, "/")
	k, errK := strconv.Atoi(ks)
	n, errN := strconv.Atoi(ns)
	if !ok || errK != nil || errN != nil {
		return Shard{}, fmt.Errorf("give the shard as k/n, shard k of n machines, e.g. 1/4 to 4/4 on a CI matrix of 4")
	}
	s := Shard{K: k, N: n}
	return s, s.Validate()
}

// Validate says why s is no shard, or nil.
func (s Shard) Validate() error {
	if s.N < 1 || s.K < 1 || s.K > s.N {
		return fmt.Errorf("shard k of n needs 1 ≤ k ≤ n (got k=%d, n=%d): give 1/%d to %d/%d, one per machine of the CI matrix", s.K, s.N, max(s.N, 1), max(s.N, 1), max(s.N, 1))
	}
	return nil
}

// Keep lists the indexes of the planned scenarios (their tokens) that fall
// to the shard, in order. A crash point covered by an earlier one
// (coveredBy[i] is its index, or -1) falls with it.
func (s Shard) Keep(tokens []string, coveredBy []int) []int {
	var out []int
	for i, tok := range tokens {
		owner := tok
		if k := coveredBy[i]; k >= 0 {
			owner = tokens[k]
		}
		if s.Owns(owner) {
			out = append(out, i)
		}
	}
	return out
}

// Run is what a sharded check records: which shard it was, every
// sequential scenario the unsharded check plans (in plan order) and
// whether this shard played the concurrent ones.
type Run struct {
	Shard
	Planned    []string
	Concurrent bool
}

// Text is the report's line about the shard.
func (s *Run) Text() string {
	if s == nil {
		return ""
	}
	conc := "the concurrent scenarios play in another shard"
	if s.Concurrent {
		conc = "and the concurrent scenarios"
	}
	return fmt.Sprintf("\nshard %s: this check played its share of the %d sequential scenarios planned, %s; twice-merge joins the shards' JSON reports (docs/ci.md)", s.Shard, len(s.Planned), conc)
}
