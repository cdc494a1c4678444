package twice

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
)

// Only whole words copy a key, and only at the places the reference run
// designated for that key.
func TestKeyCopiesAreWholeWords(t *testing.T) {
	base := rowBase("reminders", "note")
	text := "invoice #2 of 12 in 2.5 days, 2 left"
	locs := wordRe.FindAllStringIndex(text, -1)
	skel := skeleton(text, locs)
	kc := &keyCopies{places: map[string][]string{tokenPlace(base, skel, 1): {"invoices.id"}}, bases: map[string]bool{base: true}}
	cp := &copier{kc: kc, vals: map[string][]string{"2": {"invoices.id"}, "12": {"invoices.id"}}}
	g := &varyingGraph{index: map[string]int{}}
	parts, ok := cp.textParts(g, base, text)
	require.True(t, ok)
	var b strings.Builder
	for _, p := range parts {
		if p.v >= 0 {
			b.WriteString("<" + g.kinds[p.v] + ">")
			continue
		}
		b.WriteString(p.lit)
	}
	// The trailing "2 left" is a value of the key too, but at a place the
	// reference run did not copy it.
	require.Equal(t, "invoice #<key> of 12 in 2.5 days, 2 left", b.String())
	_, ok = cp.textParts(g, base, "invoice #7 of 12")
	require.False(t, ok, "7 is no value of the key in this run")
}

// BenchmarkKeyCopiesCompare is the comparison alone of a scenario whose
// crash burned a sequence value, in a database of n audited invoices (each
// audit row a jsonb copy of its invoice, key included): with the copies
// renamed, and without (as before, the copies raw: the scenario differs).
func BenchmarkKeyCopiesCompare(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10, 1000} {
		job := Job{
			Name: fmt.Sprintf("audited invoice of %d", n),
			Schema: pgfixture.SQL(`
CREATE TABLE invoices (id bigserial PRIMARY KEY, customer text NOT NULL UNIQUE, cents int NOT NULL);
CREATE TABLE invoice_audit (id bigserial PRIMARY KEY, invoice jsonb NOT NULL);
CREATE FUNCTION audit_invoice() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO invoice_audit (invoice) VALUES (row_to_json(NEW)::jsonb); RETURN NEW; END $$;
CREATE TRIGGER invoices_audit AFTER INSERT ON invoices FOR EACH ROW EXECUTE FUNCTION audit_invoice();`),
			Seed: SeedSQL(fmt.Sprintf(`INSERT INTO invoices (customer, cents) SELECT 'c' || i, i FROM generate_series(1, %d) i`, n-1)),
			Run: func(ctx context.Context, a *Attempt) error {
				return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
					_, err := tx.Exec(ctx, `INSERT INTO invoices (customer, cents) VALUES ('ada', 1200) ON CONFLICT DO NOTHING`)
					return err
				})
			},
		}
		rep := Check(ctx, job, Only("crash@3"))
		if rep.Err != nil || !rep.OK() || len(rep.Scenarios) != 1 {
			b.Fatalf("unexpected verdict: %s", rep)
		}
		ref, sr := rep.Reference, rep.Scenarios[0]
		if ref.keyCopies == nil || sr.Snapshot.String() == ref.Snapshot.String() {
			b.Fatal("no copies, or no burned value")
		}
		cfg := newConfig(nil)
		b.Run(fmt.Sprintf("rows=%d/copies", n), func(b *testing.B) {
			for b.Loop() {
				if compare(ref, sr, cfg) != nil {
					b.Fatal("differs")
				}
			}
		})
		b.Run(fmt.Sprintf("rows=%d/raw", n), func(b *testing.B) {
			kc, sh := ref.keyCopies, ref.varyingSet
			ref.keyCopies = nil
			if sh != nil {
				ref.varyingSet = &varyingSet{exact: sh.exact, cols: sh.cols, stable: sh.stable, json: sh.json, words: sh.words, same: sh.same, wall: sh.wall, clock: sh.clock}
				ref.varyingSet.ref = ref.varyingSet.canon(ref, nil)
			}
			for b.Loop() {
				compare(ref, sr, cfg)
			}
			ref.keyCopies, ref.varyingSet = kc, sh
		})
	}
}
