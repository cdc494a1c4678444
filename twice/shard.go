package twice

import (
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"
)

// Shards over machines. With -twice.shard=k/n every check plays its
// reference runs and the share of its other scenarios that falls to shard
// k: a scenario belongs to the shard numbered by the FNV-1a hash of its
// token modulo n, so n machines of a CI matrix together play exactly the
// scenarios of the unsharded check, each once. Two rules keep that exact:
// a crash point covered by an earlier one of the same world (crashstates.go)
// goes with the point that covers it, which decides whether it plays; and
// the concurrent scenarios, whose exploration picks the next interleaving
// from the last, play together in the shard of the token "concurrent".
// twice-merge (cmd/twice-merge) joins the shards' JSON reports.

// Shard plays only shard k of n of the check's scenarios (1 ≤ k ≤ n), as
// -twice.shard=k/n does; the reference runs play in every shard. Shard(1, 1)
// plays them all. -twice.run (and Only) replays its one scenario in any
// shard.
func Shard(k, n int) Option {
	return optionFunc(func(c *config) { c.shard = &shard{k: k, n: n} })
}

// shard is shard k of n.
type shard struct{ k, n int }

func (s shard) String() string { return fmt.Sprintf("%d/%d", s.k, s.n) }

// concurrentShardToken is what the concurrent scenarios are sharded by.
const concurrentShardToken = "concurrent"

// owns reports whether a scenario of this token falls to this shard.
func (s shard) owns(token string) bool {
	if s.n <= 1 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(token))
	return int(h.Sum32()%uint32(s.n)) == s.k-1
}

// shardSetting is -twice.shard, else TWICE_SHARD, with where it came from.
func shardSetting() (value, from string) {
	if *shardFlag != "" {
		return *shardFlag, "-twice.shard"
	}
	return os.Getenv("TWICE_SHARD"), "TWICE_SHARD"
}

// resolveShard is the option, else -twice.shard, else TWICE_SHARD, else
// 1/1 (everything).
func (c *config) resolveShard() (shard, error) {
	if c.shard != nil {
		if err := c.shard.validate(); err != nil {
			return shard{}, fmt.Errorf("twice: Shard(%d, %d): %w", c.shard.k, c.shard.n, err)
		}
		return *c.shard, nil
	}
	v, from := shardSetting()
	if v == "" {
		return shard{k: 1, n: 1}, nil
	}
	s, err := parseShard(v)
	if err != nil {
		return shard{}, fmt.Errorf("twice: %s=%s: %w", from, v, err)
	}
	return s, nil
}

// parseShard reads "k/n".
func parseShard(v string) (shard, error) {
	ks, ns, ok := strings.Cut(v, "/")
	k, errK := strconv.Atoi(ks)
	n, errN := strconv.Atoi(ns)
	if !ok || errK != nil || errN != nil {
		return shard{}, fmt.Errorf("give the shard as k/n, shard k of n machines, e.g. 1/4 to 4/4 on a CI matrix of 4")
	}
	s := shard{k: k, n: n}
	return s, s.validate()
}

func (s shard) validate() error {
	if s.n < 1 || s.k < 1 || s.k > s.n {
		return fmt.Errorf("shard k of n needs 1 ≤ k ≤ n (got k=%d, n=%d): give 1/%d to %d/%d, one per machine of the CI matrix", s.k, s.n, max(s.n, 1), max(s.n, 1), max(s.n, 1))
	}
	return nil
}

// shardPlan keeps the planned scenarios that fall to the shard. A crash
// point covered by an earlier one (coveredBy) falls with it.
func (s shard) keep(scenarios []Scenario, coveredBy []int) []Scenario {
	if s.n <= 1 {
		return scenarios
	}
	var out []Scenario
	for i, sc := range scenarios {
		owner := sc
		if k := coveredBy[i]; k >= 0 {
			owner = scenarios[k]
		}
		if s.owns(owner.Token()) {
			out = append(out, sc)
		}
	}
	return out
}

// shardRun is what a sharded check records: which shard it was, every
// sequential scenario the unsharded check plans (in plan order) and
// whether this shard played the concurrent ones.
type shardRun struct {
	shard
	planned    []string
	concurrent bool
}

// text is the report's line about the shard.
func (s *shardRun) text() string {
	if s == nil {
		return ""
	}
	conc := "the concurrent scenarios play in another shard"
	if s.concurrent {
		conc = "and the concurrent scenarios"
	}
	return fmt.Sprintf("\nshard %s: this check played its share of the %d sequential scenarios planned, %s; twice-merge joins the shards' JSON reports (docs/ci.md)", s.shard, len(s.planned), conc)
}
