package pgfixture

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seededSchema has a serial key, a foreign key and a schema of its own.
var seededSchema = SQL(`CREATE SCHEMA billing;
	CREATE TABLE billing.accounts (id serial PRIMARY KEY, points float8 NOT NULL);
	CREATE TABLE billing.entries (account_id int NOT NULL REFERENCES billing.accounts, note text)`)

const seedRandomly = `INSERT INTO billing.accounts (points) SELECT random() FROM generate_series(1, 3);
	INSERT INTO billing.entries SELECT id, 'seeded' FROM billing.accounts`

// After Checkpoint, Reset restores the seeded rows (the random values the
// seed drew once) and the sequence's value; UseCheckpoint gives another
// database of the schema the same rows.
func TestCheckpointRestoresTheSeededState(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	db := New(t, seededSchema)
	execSQL(t, db, seedRandomly)
	seeded := mustSnap(t, db, KeepVolatile())
	cp, err := db.Checkpoint(ctx)
	require.NoError(t, err)

	execSQL(t, db, `UPDATE billing.accounts SET points = points + 50; DELETE FROM billing.entries; INSERT INTO billing.accounts (points) VALUES (1)`)
	require.NoError(t, db.Reset(ctx))
	assert.Equal(t, seeded.String(), mustSnap(t, db, KeepVolatile()).String(), "Reset restores the checkpoint")
	var next int
	require.NoError(t, db.Pool().QueryRow(ctx, `INSERT INTO billing.accounts (points) VALUES (1) RETURNING id`).Scan(&next))
	assert.Equal(t, 4, next, "the sequence is restored too")

	other := New(t, seededSchema)
	assert.Empty(t, mustSnap(t, other).Rows("billing.accounts"), "a new database is in the migrated state")
	require.NoError(t, other.UseCheckpoint(ctx, cp))
	assert.Equal(t, seeded.String(), mustSnap(t, other, KeepVolatile()).String(), "UseCheckpoint restores the same rows")
	execSQL(t, other, `DELETE FROM billing.entries`)
	require.NoError(t, other.Reset(ctx))
	assert.Equal(t, seeded.String(), mustSnap(t, other, KeepVolatile()).String())
}

// A database whose schema is not the checkpoint's refuses it.
func TestUseCheckpointRefusesAnotherSchema(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	db := New(t, seededSchema)
	execSQL(t, db, seedRandomly)
	cp, err := db.Checkpoint(ctx)
	require.NoError(t, err)
	other := New(t, SQL(`CREATE TABLE t (n int)`))
	require.Error(t, other.UseCheckpoint(ctx, cp))
	execSQL(t, other, `INSERT INTO t VALUES (1)`)
	require.NoError(t, other.Reset(ctx))
	assert.Empty(t, mustSnap(t, other).Rows("t"), "still reset to its migrated state")
}

// A Reset that has to clone the database again (the schema was changed)
// restores the checkpoint on the new clone.
func TestCheckpointSurvivesAReclone(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	db := New(t, seededSchema)
	execSQL(t, db, seedRandomly)
	seeded := mustSnap(t, db, KeepVolatile())
	_, err := db.Checkpoint(ctx)
	require.NoError(t, err)
	execSQL(t, db, `ALTER TABLE billing.entries ADD COLUMN extra int; DELETE FROM billing.entries`)
	require.NoError(t, db.Reset(ctx))
	assert.Equal(t, seeded.String(), mustSnap(t, db, KeepVolatile()).String())
}
