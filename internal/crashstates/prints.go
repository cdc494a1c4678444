package crashstates

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/faults"
)

// Prints fingerprints the world before each point of the reference run:
// prints[i] is the world a crash before point i+1 leaves ("" when it could
// not be read, which matches nothing).
type Prints struct {
	pool    func() *pgxpool.Pool
	effects func() []effects.Effect
	query   string
	prints  []string
}

// fingerprintLockTimeout bounds how long the fingerprint waits on a lock the
// attempt holds (an ACCESS EXCLUSIVE lock of a table it changes).
const fingerprintLockTimeout = "200ms"

// New prepares the fingerprint query for the check's database (pool):
// every row of every table and every sequence's state, outside PostgreSQL's
// own schemas. The effects made so far (effs) are part of the world.
func New(ctx context.Context, pool func() *pgxpool.Pool, effs func() []effects.Effect) (*Prints, error) {
	rows, err := pool().Query(ctx, `
SELECT c.oid::regclass::text, c.relkind = 'S'
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'S') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'
ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	var parts []string
	for rows.Next() {
		var name string
		var seq bool
		if err := rows.Scan(&name, &seq); err != nil {
			rows.Close()
			return nil, err
		}
		if seq {
			parts = append(parts, fmt.Sprintf("(SELECT last_value::text || ':' || is_called::text FROM %s)", name))
		} else {
			parts = append(parts, fmt.Sprintf("(SELECT md5(coalesce(string_agg(x::text, E'\\n' ORDER BY x::text), '')) FROM %s x)", name))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	q := "SELECT ''"
	if len(parts) > 0 {
		q = "SELECT concat_ws('|', " + strings.Join(parts, ", ") + ")"
	}
	return &Prints{pool: pool, effects: effs, query: q}, nil
}

// Wait is the reference run's inject.Plan.Wait: it records the world as it
// stands before the point proceeds.
func (w *Prints) Wait(ctx context.Context, s faults.Step) error {
	w.prints = append(w.prints, w.read(context.WithoutCancel(ctx)))
	return nil
}

func (w *Prints) read(ctx context.Context) string {
	var db string
	err := pgx.BeginFunc(ctx, w.pool(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+fingerprintLockTimeout+"'"); err != nil {
			return err
		}
		return tx.QueryRow(ctx, w.query).Scan(&db)
	})
	if err != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", db)
	for _, e := range w.effects() {
		fmt.Fprintf(h, "%#v\n", e)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// At is the world a crash before point n leaves; "" when unknown.
func (w *Prints) At(n int) string {
	if w == nil || n < 1 || n > len(w.prints) {
		return ""
	}
	return w.prints[n-1]
}
