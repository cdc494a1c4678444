package pgfixture

import (
	"context"
	"errors"
	"fmt"
)

// Checkpoint is a database's rows and sequence values at one moment, as
// Reset restores them.
type Checkpoint struct {
	plan *resetPlan
}

// Checkpoint makes the database's present rows and sequence values the
// state that Reset restores, in place of the migrated state. It returns
// that state, for UseCheckpoint on another database of the same schema.
// Seeding a database once and taking a checkpoint gives every later Reset
// the very same seeded rows, whatever the seed drew at random.
func (db *DB) Checkpoint(ctx context.Context) (*Checkpoint, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil, errors.New("pgfixture: Checkpoint of a closed DB")
	}
	plan, err := capturePlan(ctx, db.pool)
	if err != nil {
		return nil, db.srv.scrub.Error(fmt.Errorf("pgfixture: checkpoint of %s: %w", db.name, err))
	}
	db.base = plan
	return &Checkpoint{plan: plan}, nil
}

// UseCheckpoint makes cp, taken on a database of the same schema, the state
// that Reset restores, and resets the database to it. It fails when the
// database's schema is not the one cp was taken on.
func (db *DB) UseCheckpoint(ctx context.Context, cp *Checkpoint) error {
	if cp == nil || cp.plan == nil {
		return errors.New("pgfixture: UseCheckpoint of no checkpoint")
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return errors.New("pgfixture: UseCheckpoint of a closed DB")
	}
	db.base = cp.plan
	if err := db.reset(ctx); err != nil {
		db.base = nil
		return err
	}
	return nil
}

// dropCheckpoint makes the migrated state the one Reset restores again.
func (db *DB) dropCheckpoint() {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.base = nil
}
