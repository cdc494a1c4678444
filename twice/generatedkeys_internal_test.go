package twice

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/pgfixture"
)

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
				if compareRun(ref, sr, cfg) != nil {
					b.Fatal("differs")
				}
			}
		})
		b.Run(fmt.Sprintf("rows=%d/raw", n), func(b *testing.B) {
			kc, sh := ref.keyCopies, ref.varying
			ref.keyCopies = nil
			if sh != nil {
				ref.varying = sh.WithReference(ref.compared(), nil)
			}
			for b.Loop() {
				compareRun(ref, sr, cfg)
			}
			ref.keyCopies, ref.varying = kc, sh
		})
	}
}
