package pgfixture

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

type migration struct {
	name string
	sql  string
}

// sqlMigrator applies SQL migrations in order, each in one round trip
// (PostgreSQL's simple protocol runs a migration of many statements at once).
type sqlMigrator struct {
	migs []migration
	err  error
	hash string
}

func newSQLMigrator(migs []migration, err error) *sqlMigrator {
	h := sha256.New()
	for _, m := range migs {
		fmt.Fprintf(h, "%d\n%s\n", len(m.sql), m.sql)
	}
	if err != nil {
		fmt.Fprintf(h, "error\n%s", err)
	}
	return &sqlMigrator{migs: migs, err: err, hash: hex.EncodeToString(h.Sum(nil))}
}

func (m *sqlMigrator) Hash() string   { return m.hash }
func (m *sqlMigrator) loadErr() error { return m.err }

func (m *sqlMigrator) Migrate(ctx context.Context, url string) error {
	if m.err != nil {
		return m.err
	}
	if len(m.migs) == 0 {
		return nil
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("pgfixture: connecting to apply migrations: %w", err)
	}
	defer conn.Close(context.Background())
	for _, mig := range m.migs {
		if _, err := conn.PgConn().Exec(ctx, mig.sql).ReadAll(); err != nil {
			return migrationError(mig, err)
		}
	}
	return nil
}

// migrationError describes a failed migration with PostgreSQL's message and,
// when PostgreSQL reports one, the line and column in the migration (whose
// text m.sql is what was sent).
func migrationError(m migration, err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return fmt.Errorf("pgfixture: %s failed: %w", m.name, err)
	}
	pos := int(pgErr.Position)
	if pos == 0 {
		pos = int(pgErr.InternalPosition)
	}
	return migrationErrorAt(m, err, pos)
}

// migrationErrorAt is migrationError for an error at character position pos
// of m.sql (1-based; 0 when unknown).
func migrationErrorAt(m migration, err error, pos int) error {
	if pos <= 0 || m.sql == "" {
		return fmt.Errorf("pgfixture: %s failed: %w", m.name, err)
	}
	line, col, text := lineCol(m.sql, pos)
	return fmt.Errorf("pgfixture: %s:%d:%d: %w\n\t%s\n\t%s^", m.name, line, col, err, text, strings.Repeat(" ", max(col-1, 0)))
}

// lineCol turns PostgreSQL's 1-based character position into a 1-based
// line and column, and returns the line's text.
func lineCol(sql string, pos int) (line, col int, text string) {
	line, col = 1, 1
	start := 0
	i := 0
	for off, r := range sql {
		i++
		if i == pos {
			end := strings.IndexByte(sql[start:], '\n')
			if end < 0 {
				end = len(sql) - start
			}
			return line, col, strings.TrimRight(sql[start:start+end], "\r")
		}
		if r == '\n' {
			line++
			col = 1
			start = off + utf8.RuneLen(r)
		} else {
			col++
		}
	}
	return line, col, ""
}
