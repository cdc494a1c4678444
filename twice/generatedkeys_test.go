package twice_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

var meterSchema = pgfixture.SQL(`
CREATE TABLE readings (
  id       bigserial PRIMARY KEY,
  meter_id bigint NOT NULL,
  day      date   NOT NULL,
  kwh      int    NOT NULL,
  UNIQUE (meter_id, day)
);
CREATE TABLE bill_lines (
  meter_id   bigint NOT NULL,
  day        date   NOT NULL,
  reading_id bigint NOT NULL REFERENCES readings (id),
  cents      int    NOT NULL,
  PRIMARY KEY (meter_id, day)
);`)

var meterSeed = twice.SeedSQL(`INSERT INTO readings (meter_id, day, kwh) VALUES (7, '2026-10-11', 40)`)

// billReading records meter 7's reading of the day and its bill line, in
// one transaction guarded by the reading's natural key (meter, day): a
// crash rolls both back, but the sequence value the reading drew is burned,
// so the redelivery's reading gets another id and its bill line references
// that one. A delivery that finds the reading recorded relinks the bill
// line to it; the buggy twin looks it up by the wrong day (yesterday's
// reading), so its bill line references the wrong parent.
func billReading(relinkDay string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
			var id int64
			err := tx.QueryRow(ctx, `INSERT INTO readings (meter_id, day, kwh) VALUES (7, '2026-10-12', 42)
ON CONFLICT (meter_id, day) DO NOTHING RETURNING id`).Scan(&id)
			if err == pgx.ErrNoRows {
				_, err = tx.Exec(ctx, `UPDATE bill_lines SET reading_id = (SELECT id FROM readings WHERE meter_id = 7 AND day = $1)
WHERE meter_id = 7 AND day = '2026-10-12'`, relinkDay)
				return err
			}
			if err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `INSERT INTO bill_lines (meter_id, day, reading_id, cents) VALUES (7, '2026-10-12', $1, 840)`, id)
			return err
		})
	}
}

// Serial keys and the columns referencing them compare up to one
// consistent renaming: the burned sequence value of a crashed attempt is no
// difference, a bill line pointing at another reading is.
func TestGeneratedKeysCompareUpToRenaming(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "bill the reading", Schema: meterSchema, Seed: meterSeed, Run: billReading("2026-10-12")}
	rep, tokens := findingTokens(t, job, twice.EveryCrashPoint())
	require.Empty(t, tokens, rep.String())
	require.Equal(t, "readings.id", rep.Reference.Snapshot.GeneratedKey("bill_lines", "reading_id"))
	burned := false
	for _, sr := range rep.Scenarios {
		if sr.Snapshot.String() != rep.Reference.Snapshot.String() {
			burned = true // a crash burned a sequence value: the ids differ, the check passed anyway
		}
	}
	require.True(t, burned, "no scenario gave the reading another id: the renaming was never tested")

	job = twice.Job{Name: "bill the reading, relinking to yesterday's", Schema: meterSchema, Seed: meterSeed, Run: billReading("2026-10-11")}
	rep, tokens = findingTokens(t, job)
	require.Contains(t, tokens, "sequential", rep.String())
	require.Equal(t, `bill_lines:
  - (meter_id=7, day=2026-10-12, reading_id=‹key 1›, cents=840)
  + (meter_id=7, day=2026-10-12, reading_id=‹key 2›, cents=840)
`, pgfixture.FormatDiff(rep.Findings[0].Database))
	require.Equal(t, []string{
		"‹key 1› is the key of readings (meter_id=7, day=2026-10-12, kwh=42) in the reference run",
		"‹key 2› is the key of readings (meter_id=7, day=2026-10-11, kwh=40) here",
	}, rep.Findings[0].Hints)
}

// auditedInvoiceSchema audits every new invoice with a trigger that copies the row
// into a jsonb column: the copy holds the invoice's id with no foreign key.
var auditedInvoiceSchema = pgfixture.SQL(`
CREATE TABLE invoices (
  id       bigserial PRIMARY KEY,
  customer text   NOT NULL,
  month    date   NOT NULL,
  cents    int    NOT NULL,
  UNIQUE (customer, month)
);
CREATE TABLE invoice_audit (
  id      bigserial PRIMARY KEY,
  invoice jsonb NOT NULL
);
CREATE FUNCTION audit_invoice() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO invoice_audit (invoice) VALUES (row_to_json(NEW)::jsonb);
  RETURN NEW;
END $$;
CREATE TRIGGER invoices_audit AFTER INSERT ON invoices FOR EACH ROW EXECUTE FUNCTION audit_invoice();`)

var auditedInvoiceSeed = twice.SeedSQL(`INSERT INTO invoices (customer, month, cents) VALUES ('ada', '2026-09-01', 900)`)

// invoiceMonth upserts ada's October invoice in one transaction (the
// trigger audits it) and, with mail, emails "invoice #<id>". A delivery
// that finds the invoice written looks its id up by lookupMonth. The buggy
// twins look up September's invoice (the wrong key) or, with reaudit,
// audit the invoice again.
func invoiceMonth(lookupMonth string, mail, reaudit bool) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		var id int64
		err := pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
			err := tx.QueryRow(ctx, `INSERT INTO invoices (customer, month, cents) VALUES ('ada', '2026-10-01', 1200)
ON CONFLICT (customer, month) DO NOTHING RETURNING id`).Scan(&id)
			if err != pgx.ErrNoRows {
				return err
			}
			if err := tx.QueryRow(ctx, `SELECT id FROM invoices WHERE customer = 'ada' AND month = $1`, lookupMonth).Scan(&id); err != nil {
				return err
			}
			if !reaudit {
				return nil
			}
			_, err = tx.Exec(ctx, `INSERT INTO invoice_audit (invoice) SELECT row_to_json(i)::jsonb FROM invoices i WHERE id = $1`, id)
			return err
		})
		if err != nil || !mail {
			return err
		}
		return a.Mailer.Send(ctx, effects.Email{To: "ada@example.com", Subject: fmt.Sprintf("invoice #%d", id)})
	}
}

// A generated key copied where no foreign key says so (a trigger's
// row_to_json(NEW) in jsonb, an email's "invoice #2") is renamed with the
// key: the sequence value a crash burned is no difference.
func TestGeneratedKeyCopiesAreRenamed(t *testing.T) {
	t.Parallel()
	email := twice.EffectPolicy("email", effects.AtLeastOnce)
	for _, mail := range []bool{false, true} {
		job := twice.Job{Name: fmt.Sprintf("invoice ada (mail=%v)", mail), Schema: auditedInvoiceSchema, Seed: auditedInvoiceSeed, Run: invoiceMonth("2026-10-01", mail, false)}
		rep, tokens := findingTokens(t, job, email, twice.EveryCrashPoint())
		require.Empty(t, tokens, rep.String())
		burned := false
		for _, sr := range rep.Scenarios {
			if sr.Snapshot.String() != rep.Reference.Snapshot.String() {
				burned = true
			}
		}
		require.True(t, burned, "no scenario gave the invoice another id: the renaming was never tested")
	}
}

// The copies are renamed, not ignored: an invoice audited twice, or an
// email naming another invoice than the reference run's, is flagged, and
// the report prints the copies as ‹key N›.
func TestGeneratedKeyCopiesStillDiffer(t *testing.T) {
	t.Parallel()
	email := twice.EffectPolicy("email", effects.AtLeastOnce)
	job := twice.Job{Name: "invoice ada, auditing again", Schema: auditedInvoiceSchema, Seed: auditedInvoiceSeed, Run: invoiceMonth("2026-10-01", false, true)}
	rep, tokens := findingTokens(t, job, email)
	require.Contains(t, tokens, "sequential", rep.String())
	require.Equal(t, `invoice_audit:
  - (invoice={"id": "‹key 1›", "cents": 1200, "month": "2026-10-01", "customer": "ada"})
  + (invoice={"id": "‹key 2›", "cents": 1200, "month": "2026-10-01", "customer": "ada"})
  + (invoice={"id": "‹key 2›", "cents": 1200, "month": "2026-10-01", "customer": "ada"})
`, pgfixture.FormatDiff(rep.Findings[0].Database))

	job = twice.Job{Name: "invoice ada, mailing September's", Schema: auditedInvoiceSchema, Seed: auditedInvoiceSeed, Run: invoiceMonth("2026-09-01", true, false)}
	rep, tokens = findingTokens(t, job, email)
	require.Contains(t, tokens, "sequential", rep.String())
	f := rep.Findings[0]
	require.Equal(t, []string{`email ada@example.com "invoice #‹key 1›": want 0, got 1 (at-least-once)`}, mismatchTexts(f.Effects))
	require.Contains(t, f.Hints, "‹key 1› is the key of invoices (customer='ada', month=2026-09-01, cents=900) here")
}

func mismatchTexts(ms []effects.Mismatch) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.String())
	}
	return out
}

// A key copied into a column without a foreign key, and into its text,
// is renamed with the key too.
func TestGeneratedKeyCopiedIntoAPlainColumn(t *testing.T) {
	t.Parallel()
	schema := pgfixture.SQL(`
CREATE TABLE invoices (id bigserial PRIMARY KEY, customer text NOT NULL UNIQUE, cents int NOT NULL);
CREATE TABLE reminders (invoice_id bigint NOT NULL, note text NOT NULL);`)
	job := twice.Job{Name: "remind of ada's invoice", Schema: schema,
		Seed: twice.SeedSQL(`INSERT INTO invoices (customer, cents) VALUES ('bob', 500)`),
		Run: func(ctx context.Context, a *twice.Attempt) error {
			return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
				var id int64
				err := tx.QueryRow(ctx, `INSERT INTO invoices (customer, cents) VALUES ('ada', 1200) ON CONFLICT (customer) DO NOTHING RETURNING id`).Scan(&id)
				if err == pgx.ErrNoRows {
					return nil
				}
				if err != nil {
					return err
				}
				_, err = tx.Exec(ctx, `INSERT INTO reminders VALUES ($1, 'pay invoice #' || $2 || ' of 12.00 in 2 days')`, id, fmt.Sprint(id))
				return err
			})
		}}
	rep, tokens := findingTokens(t, job, twice.EveryCrashPoint())
	require.Empty(t, tokens, rep.String())
}
