package twice

import "github.com/twicekit/twicekit/internal/shard"

// Shards over machines (internal/shard): with -twice.shard=k/n every check
// plays its reference runs and the share of its other scenarios that falls
// to shard k. twice-merge (cmd/twice-merge) joins the shards' JSON reports.

// Shard plays only shard k of n of the check's scenarios (1 ≤ k ≤ n), as
// -twice.shard=k/n does; the reference runs play in every shard. Shard(1, 1)
// plays them all. -twice.run (and Only) replays its one scenario in any
// shard.
func Shard(k, n int) Option {
	return optionFunc(func(c *config) { c.Shard = &shard.Shard{K: k, N: n} })
}
