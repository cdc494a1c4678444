// Package migration holds what pgfixture and its migrator packages
// (pgfixture/goosemigrator, pgfixture/golangmigrator) share: a migration
// file, its error with the line and column PostgreSQL reported, and the
// mark of a migrator that reads its files when it is made.
// It also reads what pgfixture.FS meets in other tools' files: the up
// sections of sql-migrate's and dbmate's (sections.go), and goose's,
// golang-migrate's and tern's files, which FS refuses with the migrator to
// use (detect.go).
package migration

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// File is one migration: its name in errors and the SQL sent.
type File struct {
	Name string
	SQL  string
}

// Error describes a failed migration with PostgreSQL's message. When
// PostgreSQL reports a position, it adds the line and column in f.SQL.
// prefix starts the message ("pgfixture", "goosemigrator", ...).
func Error(prefix string, f File, err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return fmt.Errorf("%s: %s failed: %w", prefix, f.Name, err)
	}
	pos := int(pgErr.Position)
	if pos == 0 {
		pos = int(pgErr.InternalPosition)
	}
	return ErrorAt(prefix, f, err, pos)
}

// ErrorAt is Error for an error at character position pos of f.SQL. The
// position is 1-based; 0 means unknown.
func ErrorAt(prefix string, f File, err error, pos int) error {
	if pos <= 0 || f.SQL == "" {
		return fmt.Errorf("%s: %s failed: %w", prefix, f.Name, err)
	}
	line, col, text := lineCol(f.SQL, pos)
	return fmt.Errorf("%s: %s:%d:%d: %w\n\t%s\n\t%s^", prefix, f.Name, line, col, err, text, strings.Repeat(" ", max(col-1, 0)))
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

// Loaded marks a built-in migrator: one that reads its files when it is
// made. Embed it and set Err to the read error.
type Loaded struct{ Err error }

func (l Loaded) loadErr() error { return l.Err }

type loader interface{ loadErr() error }

// LoadErr returns m's read error and whether m embeds [Loaded].
func LoadErr(m any) (err error, builtin bool) {
	l, ok := m.(loader)
	if !ok {
		return nil, false
	}
	return l.loadErr(), true
}

// OpenSQL returns a database/sql handle on url through pgx. It connects
// lazily.
func OpenSQL(url string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(stdlib.GetConnector(*cfg)), nil
}

// Unopened returns a database/sql handle that is never opened. A migration
// tool that needs a handle to list its migrations gets this one.
func Unopened() *sql.DB {
	cfg, err := pgx.ParseConfig("postgres://unused.invalid/unused?sslmode=disable")
	if err != nil {
		panic(err)
	}
	return sql.OpenDB(stdlib.GetConnector(*cfg))
}
