package seed

import (
	"context"
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/pgfixture"
)

// everySchema is the check's snapshot options read over every schema,
// whatever Schemas says.
func (d DB) everySchema() []pgfixture.SnapshotOption {
	return append(append([]pgfixture.SnapshotOption(nil), d.Snapshot...), pgfixture.Schemas())
}

// UncomparedRead reads, after the reference run, every schema of the
// database when the run (ref, its rows as the check compares them)
// changed no table the check compares; nil when it changed one (or the
// read failed, which UncomparedWrites then tells).
func (st *State) UncomparedRead(ctx context.Context, d DB, ref *pgfixture.Snapshot) (*pgfixture.Snapshot, error) {
	seeded := st.Compared()
	if seeded == nil || len(pgfixture.Diff(seeded, ref)) > 0 {
		return nil, nil
	}
	snap, err := d.DB.Snapshot(ctx, d.everySchema()...)
	if err != nil {
		return nil, fmt.Errorf("twice: internal error: reading the database: %w", err)
	}
	return snap, nil
}

// UncomparedWrites fails a check whose reference run changed tables the
// check does not compare and none it does: no scenario could then fail on
// the database. wide is the reference run's every schema (UncomparedRead),
// ref its rows as the check compares them. It resets the database to the
// seeded state to compare with.
func (st *State) UncomparedWrites(ctx context.Context, d DB, wide, ref *pgfixture.Snapshot) error {
	if wide == nil {
		return nil
	}
	if err := st.Reset(ctx, d); err != nil {
		return err
	}
	seeded, err := d.DB.Snapshot(ctx, d.everySchema()...)
	if err != nil {
		return fmt.Errorf("twice: internal error: reading the seeded database: %w", err)
	}
	compared := map[string]bool{}
	for _, t := range ref.Tables() {
		compared[t] = true
	}
	var written []string
	for _, df := range pgfixture.Diff(seeded, wide) {
		if !compared[df.Table] && (len(written) == 0 || written[len(written)-1] != df.Table) {
			written = append(written, df.Table)
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
	return d.Usage(fmt.Errorf("twice: the job wrote %s, which the check does not compare, and no table it compares: no scenario could fail on the database.\n"+
		"twice.Schemas leaves %s out: add %s to twice.Schemas, or leave twice.Schemas out to compare every schema",
		joinAnd(written), them(len(written)), strings.Join(quoted, ", ")))
}

// joinAnd joins names with commas and a final "and".
func joinAnd(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// them is "it" or "them".
func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// Unseen names the tables a reference run changed although the check saw
// none of its statements: it compares the run's rows (after) with the
// seeded state's. nil when one of the run's attempts (each its points)
// sent a statement through its handles, or the run changed nothing.
func (st *State) Unseen(attempts [][]faults.Step, after *pgfixture.Snapshot) []string {
	for _, points := range attempts {
		for _, p := range points {
			if p.Kind == faults.SQL {
				return nil
			}
		}
	}
	var tables []string
	for _, d := range pgfixture.Diff(st.Compared(), after) {
		tables = append(tables, d.Table)
	}
	return tables
}
