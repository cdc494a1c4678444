package pgfixture

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
)

// Schema is an ordered list of SQL migrations. The zero Schema is empty.
type Schema struct {
	migs []migration
	err  error // a read error of FS, reported by CreateDB
	hash string
}

type migration struct {
	name string
	sql  string
}

// SQL returns a Schema of the given migrations, applied in order; errors name
// them "migration 1", "migration 2", ...
func SQL(migrations ...string) Schema {
	migs := make([]migration, len(migrations))
	for i, m := range migrations {
		migs[i] = migration{name: fmt.Sprintf("migration %d", i+1), sql: m}
	}
	return newSchema(migs, nil)
}

// FS returns a Schema of every *.sql file at the root of fsys, applied in
// name order and named by file name in errors. A read error is returned by
// CreateDB (and makes New fail).
func FS(fsys fs.FS) Schema {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return newSchema(nil, fmt.Errorf("pgfixture: listing migrations: %w", err))
	}
	sort.Strings(names)
	var migs []migration
	var errs []error
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			errs = append(errs, fmt.Errorf("pgfixture: reading migration %s: %w", n, err))
			continue
		}
		migs = append(migs, migration{name: n, sql: string(b)})
	}
	if len(names) == 0 {
		errs = append(errs, errors.New("pgfixture: no *.sql files at the root of the migrations FS"))
	}
	return newSchema(migs, errors.Join(errs...))
}

func newSchema(migs []migration, err error) Schema {
	h := sha256.New()
	for _, m := range migs {
		fmt.Fprintf(h, "%d\n%s\n", len(m.sql), m.sql)
	}
	if err != nil {
		fmt.Fprintf(h, "error\n%s", err)
	}
	return Schema{migs: migs, err: err, hash: hex.EncodeToString(h.Sum(nil))}
}

// Hash identifies the schema's content (the migrations' SQL in order); two
// schemas with the same hash share a template database.
func (s Schema) Hash() string {
	if s.hash == "" {
		return newSchema(nil, nil).hash
	}
	return s.hash
}

// migrationError describes a failed migration with PostgreSQL's message and,
// when PostgreSQL reports one, the line and column in the migration.
func migrationError(m migration, err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return fmt.Errorf("pgfixture: %s failed: %w", m.name, err)
	}
	pos := int(pgErr.Position)
	if pos == 0 {
		pos = int(pgErr.InternalPosition)
	}
	if pos <= 0 {
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
