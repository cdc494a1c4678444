package options

import (
	"runtime"
	"time"

	"github.com/twicekit/twicekit/internal/inorder"
	"github.com/twicekit/twicekit/internal/settings"
	"github.com/twicekit/twicekit/internal/shard"
)

// ResolveParallel is how many scenarios the check may play at once: the
// option, else -twice.parallel, else TWICE_PARALLEL ("auto": one per core),
// else 1 (inorder.Count says why 1; internal/settings reads the flag and the environment).
func (c *Config) ResolveParallel() (int, error) {
	v, from := settings.Parallel()
	return inorder.Count(c.Parallel, v, from, runtime.GOMAXPROCS(0))
}

// ResolveShard is the option, else -twice.shard, else TWICE_SHARD, else
// 1/1 (everything).
func (c *Config) ResolveShard() (shard.Shard, error) {
	v, from := settings.Shard()
	return shard.Resolve(c.Shard, v, from)
}

// WallBudget is the check's bound: the option, else -twice.wall, else
// TWICE_WALL, else def (twice's DefaultWallBudget).
func (c *Config) WallBudget(def time.Duration) (time.Duration, error) {
	if c.Wall != nil {
		return *c.Wall, nil
	}
	return settings.Wall(def)
}
