package twice_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

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
