package twice

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/faults"
)

// Crash states explored once. A crash before point N leaves behind what was
// committed before N (rows and sequence values) and the effects made before
// N; the redelivery of a deterministic job starts from exactly that. Two
// crash points that leave the same world lead to the same redelivery, so the
// check plays the first of them and reports the others as covered by it —
// the state caching of model checkers, applied to crash points. The world
// before every point is fingerprinted during the reference run, from a
// connection of the check's own: committed data is what a crash keeps.
//
// The verdict never changes: a covered crash point is played after all when
// the one covering it broke a promise, so a failing check reports every
// crash point that fails, as it would without the cache.

// EveryCrashPoint plays every crash point, even those that leave the world
// exactly as an earlier one does (by default such a point is covered by the
// earlier one and not replayed).
func EveryCrashPoint() Option {
	return optionFunc(func(c *config) { c.everyCrashPoint = true })
}

// worldPrints fingerprints the world before each point of the reference
// run: prints[i] is the world a crash before point i+1 leaves ("" when it
// could not be read, which matches nothing).
type worldPrints struct {
	c      *checker
	query  string
	prints []string
}

// fingerprintLockTimeout bounds how long the fingerprint waits on a lock the
// attempt holds (an ACCESS EXCLUSIVE lock of a table it changes).
const fingerprintLockTimeout = "200ms"

// newWorldPrints prepares the fingerprint query for the check's database:
// every row of every table and every sequence's state, outside PostgreSQL's
// own schemas.
func (c *checker) newWorldPrints(ctx context.Context) (*worldPrints, error) {
	rows, err := c.db.Pool().Query(ctx, `
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
	return &worldPrints{c: c, query: q}, nil
}

// wait is the reference run's inject.Plan.Wait: it records the world as it
// stands before the point proceeds.
func (w *worldPrints) wait(ctx context.Context, s faults.Step) error {
	w.prints = append(w.prints, w.read(context.WithoutCancel(ctx)))
	return nil
}

func (w *worldPrints) read(ctx context.Context) string {
	var db string
	err := pgx.BeginFunc(ctx, w.c.db.Pool(), func(tx pgx.Tx) error {
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
	for _, e := range w.c.log.Effects() {
		fmt.Fprintf(h, "%#v\n", e)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// at is the world a crash before point n leaves; "" when unknown.
func (w *worldPrints) at(n int) string {
	if w == nil || n < 1 || n > len(w.prints) {
		return ""
	}
	return w.prints[n-1]
}

// crashCache decides which crash scenarios a check plays: the first crash
// point of each world, and the others only when that first one broke a
// promise.
type crashCache struct {
	prints  *worldPrints
	first   map[string]int // world -> the first crash point played that leaves it
	flagged map[int]bool   // crash points that broke a promise
	covered map[int][]int  // first crash point -> the crash points it covered
}

func newCrashCache(p *worldPrints) *crashCache {
	return &crashCache{prints: p, first: map[string]int{}, flagged: map[int]bool{}, covered: map[int][]int{}}
}

// skip reports whether s is covered by an earlier crash point that kept
// every promise; it records s as the first of its world otherwise.
func (cc *crashCache) skip(s Scenario) bool {
	if s.Kind != CrashBefore {
		return false
	}
	w := cc.prints.at(s.Point)
	if w == "" {
		return false
	}
	k, seen := cc.first[w]
	if !seen {
		cc.first[w] = s.Point
		return false
	}
	if cc.flagged[k] {
		return false
	}
	cc.covered[k] = append(cc.covered[k], s.Point)
	return true
}

// ran notes whether a crash scenario broke a promise.
func (cc *crashCache) ran(s Scenario, broke bool) {
	if s.Kind == CrashBefore && broke {
		cc.flagged[s.Point] = true
	}
}

// coveredText says which crash points were covered by which, for the report.
func coveredText(covered map[int][]int) string {
	if len(covered) == 0 {
		return ""
	}
	reps := slices.Sorted(maps.Keys(covered))
	var parts []string
	n := 0
	for _, k := range reps {
		var ts []string
		for _, p := range covered[k] {
			ts = append(ts, fmt.Sprintf("crash@%d", p))
			n++
		}
		parts = append(parts, fmt.Sprintf("%s by crash@%d", strings.Join(ts, ", "), k))
	}
	what := fmt.Sprintf("%d crash points not replayed: they leave", n)
	if n == 1 {
		what = "1 crash point not replayed: it leaves"
	}
	return fmt.Sprintf("%s the same rows, sequences and effects as an earlier one that kept every promise (%s); twice.EveryCrashPoint() replays them",
		what, strings.Join(parts, "; "))
}
