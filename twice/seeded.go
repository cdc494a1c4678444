package twice

import (
	"context"

	"github.com/twicekit/twicekit/internal/seed"
)

// seedState is the state every scenario of a check starts from, shared by
// the check's lanes (internal/seed).
type seedState struct{ seed.State }

// seedDB is c's database as internal/seed resets it.
func (c *checker) seedDB() seed.DB {
	return seed.DB{DB: c.db, Seed: c.job.Seed, Snapshot: c.cfg.Snapshot, On: &c.seedOn, Usage: usage}
}

// resetSeeded brings c's database to the state every scenario starts from:
// the migrated state with the seed's rows.
func (c *checker) resetSeeded(ctx context.Context) error { return c.seeded.Reset(ctx, c.seedDB()) }
