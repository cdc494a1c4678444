package checkstate

import (
	"context"

	"github.com/twicekit/twicekit/internal/checkrun"
	"github.com/twicekit/twicekit/internal/crashstates"
	"github.com/twicekit/twicekit/internal/seed"
)

// SeedDB is s's database as internal/seed resets it.
func (s *State[A]) SeedDB() seed.DB {
	return seed.DB{DB: s.DB, Seed: s.seedFn, Snapshot: s.Opts.Snapshot, On: &s.SeedOn, Usage: checkrun.Usage}
}

// ResetSeeded brings s's database to the state every scenario starts from:
// the migrated state with the seed's rows.
func (s *State[A]) ResetSeeded(ctx context.Context) error { return s.Seeded.Reset(ctx, s.SeedDB()) }

// NewWorldPrints prepares the fingerprints of the check's database and
// effects (internal/crashstates).
func (s *State[A]) NewWorldPrints(ctx context.Context) (*crashstates.Prints, error) {
	return crashstates.New(ctx, s.DB.Pool, s.Log.Effects)
}
