package twice

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/pgfixture"
)

// seedState is the state every scenario of a check starts from, shared by
// the check's lanes: the seed runs once, on the check's first reset, and
// its rows and sequence values are kept as a checkpoint that every later
// reset restores. A seed that draws random values (random(), a uuid, now())
// so gives every scenario, and both clean runs, the very same rows.
type seedState struct {
	mu sync.Mutex
	cp *pgfixture.Checkpoint
	// compared is the seeded state as the check compares it.
	compared *pgfixture.Snapshot
}

// resetSeeded brings c's database to the state every scenario starts from:
// the migrated state with the seed's rows.
func (c *checker) resetSeeded(ctx context.Context) error {
	st := c.seeded
	st.mu.Lock()
	cp, first := st.cp, st.compared == nil
	st.mu.Unlock()
	switch {
	case c.seedOn || (!first && cp == nil): // a reset restores the checkpoint, or there is no seed
		if err := c.db.Reset(ctx); err != nil {
			return fmt.Errorf("twice: internal error: resetting the database: %w", err)
		}
		return nil
	case cp != nil: // a lane's first reset: the check's seeded rows
		if err := c.db.UseCheckpoint(ctx, cp); err != nil {
			return fmt.Errorf("twice: internal error: restoring the seeded rows on a parallel lane's database: %w", err)
		}
		c.seedOn = true
		return nil
	}
	// The check's first reset, before its reference run (lanes play later).
	if err := c.db.Reset(ctx); err != nil {
		return fmt.Errorf("twice: internal error: resetting the database: %w", err)
	}
	if c.job.Seed != nil {
		err := pgx.BeginFunc(ctx, c.db.Pool(), func(tx pgx.Tx) error { return c.job.Seed(ctx, tx) })
		if err != nil {
			return usage(fmt.Errorf("twice: the seed data failed to insert: %w\n(Job.Seed runs once, on the migrated schema, and every scenario starts from its rows: fix the seed or the schema)", err))
		}
		if cp, err = c.db.Checkpoint(ctx); err != nil {
			return fmt.Errorf("twice: internal error: keeping the seeded rows: %w", err)
		}
		c.seedOn = true
	}
	snap, err := c.db.Snapshot(ctx, c.cfg.snapshot...)
	if err != nil {
		return fmt.Errorf("twice: internal error: reading the seeded database: %w", err)
	}
	st.mu.Lock()
	st.cp, st.compared = cp, snap
	st.mu.Unlock()
	return nil
}

// seededSnapshot is the seeded state as the check compares it.
func (c *checker) seededSnapshot() *pgfixture.Snapshot {
	c.seeded.mu.Lock()
	defer c.seeded.mu.Unlock()
	return c.seeded.compared
}

// everySchema is the check's snapshot options read over every schema,
// whatever Schemas says.
func (c *checker) everySchema() []pgfixture.SnapshotOption {
	return append(append([]pgfixture.SnapshotOption(nil), c.cfg.snapshot...), pgfixture.Schemas())
}

// uncomparedRead reads, after the reference run, every schema of the
// database when the run changed no table the check compares; nil when it
// changed one (or the read failed, which uncomparedWrites then tells).
func (c *checker) uncomparedRead(ctx context.Context, ref *ScenarioRun) (*pgfixture.Snapshot, error) {
	seeded := c.seededSnapshot()
	if seeded == nil || len(pgfixture.Diff(seeded, ref.Snapshot)) > 0 {
		return nil, nil
	}
	snap, err := c.db.Snapshot(ctx, c.everySchema()...)
	if err != nil {
		return nil, fmt.Errorf("twice: internal error: reading the database: %w", err)
	}
	return snap, nil
}

// uncomparedWrites fails a check whose reference run changed tables the
// check does not compare and none it does: no scenario could then fail on
// the database. wide is the reference run's every schema (uncomparedRead).
// It resets the database to the seeded state to compare with.
func (c *checker) uncomparedWrites(ctx context.Context, wide *pgfixture.Snapshot, ref *ScenarioRun) error {
	if wide == nil {
		return nil
	}
	if err := c.resetSeeded(ctx); err != nil {
		return err
	}
	seeded, err := c.db.Snapshot(ctx, c.everySchema()...)
	if err != nil {
		return fmt.Errorf("twice: internal error: reading the seeded database: %w", err)
	}
	compared := map[string]bool{}
	for _, t := range ref.Snapshot.Tables() {
		compared[t] = true
	}
	var written []string
	for _, d := range pgfixture.Diff(seeded, wide) {
		if !compared[d.Table] && (len(written) == 0 || written[len(written)-1] != d.Table) {
			written = append(written, d.Table)
		}
	}
	if len(written) == 0 {
		return nil
	}
	schemas := map[string]bool{}
	var quoted []string
	for _, t := range written {
		s := "public"
		if i := strings.IndexByte(t, '.'); i >= 0 {
			s = t[:i]
		}
		if !schemas[s] {
			schemas[s] = true
			quoted = append(quoted, fmt.Sprintf("%q", s))
		}
	}
	return usage(fmt.Errorf("twice: the job wrote %s, which the check does not compare, and no table it compares: no scenario could fail on the database.\n"+
		"twice.Schemas leaves %s out: add %s to twice.Schemas, or leave twice.Schemas out to compare every schema",
		joinAnd(written), them(len(written)), strings.Join(quoted, ", ")))
}

// them is "it" or "them".
func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
