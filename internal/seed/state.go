package seed

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/pgfixture"
)

// State is the state every scenario of a check starts from, shared by
// the check's lanes: the seed runs once, on the check's first reset, and
// its rows and sequence values are kept as a checkpoint that every later
// reset restores. A seed that draws random values (random(), a uuid, now())
// so gives every scenario, and both clean runs, the very same rows.
type State struct {
	mu sync.Mutex
	cp *pgfixture.Checkpoint
	// compared is the seeded state as the check compares it.
	compared *pgfixture.Snapshot
}

// DB is one database of the check (the check's own or a lane's) as Reset
// sees it.
type DB struct {
	DB *pgfixture.DB
	// Seed is the job's seed (nil: none).
	Seed func(context.Context, pgx.Tx) error
	// Snapshot is the check's snapshot options.
	Snapshot []pgfixture.SnapshotOption
	// On says that DB restores the seeded state on Reset.
	On *bool
	// Usage marks an error as the user's mistake.
	Usage func(error) error
}

// Reset brings d's database to the state every scenario starts from:
// the migrated state with the seed's rows.
func (st *State) Reset(ctx context.Context, d DB) error {
	st.mu.Lock()
	cp, first := st.cp, st.compared == nil
	st.mu.Unlock()
	switch {
	case *d.On || (!first && cp == nil): // a reset restores the checkpoint, or there is no seed
		if err := d.DB.Reset(ctx); err != nil {
			return fmt.Errorf("twice: internal error: resetting the database: %w", err)
		}
		return nil
	case cp != nil: // a lane's first reset: the check's seeded rows
		if err := d.DB.UseCheckpoint(ctx, cp); err != nil {
			return fmt.Errorf("twice: internal error: restoring the seeded rows on a parallel lane's database: %w", err)
		}
		*d.On = true
		return nil
	}
	// The check's first reset, before its reference run (lanes play later).
	if err := d.DB.Reset(ctx); err != nil {
		return fmt.Errorf("twice: internal error: resetting the database: %w", err)
	}
	if d.Seed != nil {
		err := pgx.BeginFunc(ctx, d.DB.Pool(), func(tx pgx.Tx) error { return d.Seed(ctx, tx) })
		if err != nil {
			return d.Usage(fmt.Errorf("twice: the seed data failed to insert: %w\n(Job.Seed runs once, on the migrated schema, and every scenario starts from its rows: fix the seed or the schema)", err))
		}
		if cp, err = d.DB.Checkpoint(ctx); err != nil {
			return fmt.Errorf("twice: internal error: keeping the seeded rows: %w", err)
		}
		*d.On = true
	}
	snap, err := d.DB.Snapshot(ctx, d.Snapshot...)
	if err != nil {
		return fmt.Errorf("twice: internal error: reading the seeded database: %w", err)
	}
	st.mu.Lock()
	st.cp, st.compared = cp, snap
	st.mu.Unlock()
	return nil
}

// Compared is the seeded state as the check compares it.
func (st *State) Compared() *pgfixture.Snapshot {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.compared
}
