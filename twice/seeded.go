package twice

import (
	"context"

	"github.com/twicekit/twicekit/internal/seed"
	"github.com/twicekit/twicekit/pgfixture"
)

// seedState is the state every scenario of a check starts from, shared by
// the check's lanes (internal/seed).
type seedState struct{ seed.State }

// seedDB is c's database as internal/seed resets it.
func (c *checker) seedDB() seed.DB {
	return seed.DB{DB: c.db, Seed: c.job.Seed, Snapshot: c.cfg.snapshot, On: &c.seedOn, Usage: usage}
}

// resetSeeded brings c's database to the state every scenario starts from:
// the migrated state with the seed's rows.
func (c *checker) resetSeeded(ctx context.Context) error { return c.seeded.Reset(ctx, c.seedDB()) }

// uncomparedRead reads, after the reference run, every schema of the
// database when the run changed no table the check compares
// (seed.State.UncomparedRead).
func (c *checker) uncomparedRead(ctx context.Context, ref *ScenarioRun) (*pgfixture.Snapshot, error) {
	return c.seeded.UncomparedRead(ctx, c.seedDB(), ref.Snapshot)
}

// uncomparedWrites fails a check whose reference run changed tables the
// check does not compare and none it does (seed.State.UncomparedWrites).
func (c *checker) uncomparedWrites(ctx context.Context, wide *pgfixture.Snapshot, ref *ScenarioRun) error {
	return c.seeded.UncomparedWrites(ctx, c.seedDB(), wide, ref.Snapshot)
}
