// Package shard splits a check's scenarios over machines.
//
// A Shard is shard k of n, read as "k/n" (Parse) and checked (Validate).
// A scenario belongs to the shard numbered by the FNV-1a hash of its token
// modulo n (Owns), so n machines of a CI matrix together play exactly the
// scenarios of the unsharded check, each once. Keep keeps the planned
// scenarios that fall to a shard: a crash point covered by an earlier one
// of the same world goes with the point that covers it, which decides
// whether it plays. The concurrent scenarios, whose exploration picks the
// next interleaving from the last, play together in the shard of the token
// ConcurrentToken. Resolve picks the shard a check plays: the option, else
// the setting (internal/settings reads -twice.shard, else TWICE_SHARD).
// A Run is what a sharded check records, and its Text is the report's
// line about it.
//
// twice keeps the option (Shard), the flag (-twice.shard) and the JSON
// report's JSONShard; twice-merge (cmd/twice-merge) joins the shards' JSON
// reports through internal/report.
package shard
