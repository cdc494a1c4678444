package pgfixture

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Kept databases. A failed test's database is kept for inspection (its
// comment says "kept", when and for which label). So that they do not pile
// up on a server that outlives the test binary (dsn mode):
//   - a database kept under a label (a test's name, see [DB.Label]) replaces
//     the one kept earlier under the same label on the same server;
//   - a database kept longer than TWICE_KEPT_MAX_AGE (a Go duration, default
//     72h) is dropped when the next test binary connects;
//   - TWICE_DROP_KEPT=1 drops every kept database when the next test binary
//     connects to the server (any run that checks a job).
const (
	envKeptMaxAge = "TWICE_KEPT_MAX_AGE"
	envDropKept   = "TWICE_DROP_KEPT"
)

// defaultKeptMaxAge is how long a kept database is left for inspection.
const defaultKeptMaxAge = 72 * time.Hour

// keptMark is the comment of a kept database after its owner: when it was
// kept and under which label (hex, so any test name fits in one field).
func keptMark(at time.Time, label string) string {
	return fmt.Sprintf(" kept at=%d label=%s", at.Unix(), hex.EncodeToString([]byte(label)))
}

// keptInfo reads a kept database's comment: whether it is kept, when (zero
// when the comment predates the time stamp) and under which label.
func keptInfo(comment string) (kept bool, at time.Time, label string) {
	_, rest, ok := strings.Cut(comment, " kept")
	if !ok {
		return false, time.Time{}, ""
	}
	for _, f := range strings.Fields(rest) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "at":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				at = time.Unix(n, 0)
			}
		case "label":
			if b, err := hex.DecodeString(v); err == nil {
				label = string(b)
			}
		}
	}
	return true, at, label
}

// keptMaxAge is TWICE_KEPT_MAX_AGE, or the default when unset or invalid.
func keptMaxAge() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(envKeptMaxAge)); err == nil && d > 0 {
		return d
	}
	return defaultKeptMaxAge
}

// Label names what the database is for (a test's name). When the database
// is kept, it replaces any database kept earlier on this server under the
// same label, so a test that fails again and again keeps one database, not
// one per run. twice and New label their databases with the test's name.
func (db *DB) Label(label string) {
	db.mu.Lock()
	db.label = label
	db.mu.Unlock()
}

// fixtureDatabase is a fixture database and its comment.
type fixtureDatabase struct{ name, comment string }

// fixtureDatabases lists pgfixture's databases (not templates) on the server.
func (s *Server) fixtureDatabases(ctx context.Context, conn execQuerier) ([]fixtureDatabase, error) {
	rows, err := conn.Query(ctx, `SELECT datname, coalesce(shobj_description(oid, 'pg_database'), '')
		FROM pg_database WHERE datname LIKE 'twicekit\_f%' AND NOT datistemplate ORDER BY datname`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (fixtureDatabase, error) {
		var d fixtureDatabase
		err := r.Scan(&d.name, &d.comment)
		return d, err
	})
}

// dropKeptUnder drops the databases kept earlier under label (but name).
func (s *Server) dropKeptUnder(ctx context.Context, conn execQuerier, label, name string) error {
	if label == "" {
		return nil
	}
	dbs, err := s.fixtureDatabases(ctx, conn)
	if err != nil {
		return err
	}
	for _, d := range dbs {
		if kept, _, l := keptInfo(d.comment); kept && l == label && d.name != name {
			if err := s.dropDatabaseOn(ctx, conn, d.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// expiredKept reports whether a kept database is to be dropped now: older
// than TWICE_KEPT_MAX_AGE, or any kept one under TWICE_DROP_KEPT=1.
func expiredKept(comment string, now time.Time) bool {
	kept, at, _ := keptInfo(comment)
	if !kept {
		return false
	}
	if os.Getenv(envDropKept) == "1" {
		return true
	}
	return !at.IsZero() && now.Sub(at) > keptMaxAge()
}
