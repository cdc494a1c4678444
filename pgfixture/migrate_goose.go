package pgfixture

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
)

// Goose returns a Schema of goose migrations (github.com/pressly/goose/v3),
// applied by goose's own Provider: the *.sql files at the root of fsys, of
// which goose runs only the Up sections, and Go migrations — those made
// with [goose.NewGoMigration] and passed here, and those registered in
// goose's global registry (goose.AddMigrationContext and friends, from the
// init functions of a migrations package). goose records the versions in
// its goose_db_version table, which is part of the template like any other.
//
// The hash covers the SQL files' names and content and the Go migrations'
// versions and file names, not their code, which cannot be hashed: after
// changing a Go migration, bump its version or touch a SQL file to rebuild
// the template. A directory goose cannot read (no migrations, a duplicate
// version, a .go file with no registered migration) makes CreateDB fail
// with goose's reason; a failing migration's error names its file (with
// the line and column of a SQL file's error) or its Go migration's version.
func Goose(fsys fs.FS, goMigrations ...*goose.Migration) Schema {
	return Migrations(newGooseMigrator(fsys, goMigrations))
}

type gooseMigrator struct {
	fsys  fs.FS
	goMig []*goose.Migration
	err   error
	hash  string
}

func newGooseMigrator(fsys fs.FS, goMig []*goose.Migration) *gooseMigrator {
	m := &gooseMigrator{fsys: fsys, goMig: goMig}
	h := sha256.New()
	fmt.Fprintf(h, "goose\n")
	// A provider on a database that is never opened lists the migrations
	// goose would apply, as goose sees them.
	db := sql.OpenDB(stdlib.GetConnector(*mustParseConfig()))
	p, err := m.provider(db)
	if err == nil {
		for _, src := range p.ListSources() {
			fmt.Fprintf(h, "%s %d %s\n", src.Type, src.Version, path.Base(src.Path))
			if src.Type != goose.TypeSQL {
				continue
			}
			b, rerr := fs.ReadFile(fsys, src.Path)
			if rerr != nil {
				err = errors.Join(err, fmt.Errorf("pgfixture: goose: reading %s: %w", src.Path, rerr))
				continue
			}
			fmt.Fprintf(h, "%d\n%s\n", len(b), b)
		}
	} else {
		err = fmt.Errorf("pgfixture: goose: %w", err)
	}
	_ = db.Close()
	if err != nil {
		fmt.Fprintf(h, "error\n%s", err)
	}
	m.err = err
	m.hash = hex.EncodeToString(h.Sum(nil))
	return m
}

func (m *gooseMigrator) provider(db *sql.DB) (*goose.Provider, error) {
	opts := []goose.ProviderOption{goose.WithLogger(goose.NopLogger())}
	if len(m.goMig) > 0 {
		opts = append(opts, goose.WithGoMigrations(m.goMig...))
	}
	return goose.NewProvider(database.DialectPostgres, db, m.fsys, opts...)
}

func (m *gooseMigrator) Hash() string   { return m.hash }
func (m *gooseMigrator) loadErr() error { return m.err }

func (m *gooseMigrator) Migrate(ctx context.Context, url string) error {
	if m.err != nil {
		return m.err
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("pgfixture: goose: %w", err)
	}
	last := &lastQuery{}
	cfg.Tracer = last
	db := sql.OpenDB(stdlib.GetConnector(*cfg))
	defer db.Close()
	// One connection for goose's session, one for Go migrations that run
	// outside a transaction.
	db.SetMaxOpenConns(2)
	p, err := m.provider(db)
	if err != nil {
		return fmt.Errorf("pgfixture: goose: %w", err)
	}
	_, err = p.Up(ctx)
	var partial *goose.PartialError
	if errors.As(err, &partial) {
		return m.failed(partial, last.get())
	}
	if err != nil {
		return fmt.Errorf("pgfixture: goose: %w", err)
	}
	return nil
}

// failed describes the migration that failed: a SQL file by name, with the
// line and column when PostgreSQL gives a position in the failing
// statement (stmt, found in the file as goose's parser cut it); a Go
// migration by version.
func (m *gooseMigrator) failed(partial *goose.PartialError, stmt string) error {
	src := partial.Failed.Source
	name := path.Base(src.Path)
	if src.Type == goose.TypeGo {
		if src.Path != "" {
			name = fmt.Sprintf("%d (%s)", src.Version, name)
		} else {
			name = fmt.Sprintf("%d", src.Version)
		}
		return fmt.Errorf("pgfixture: goose Go migration %s failed: %w", name, partial.Err)
	}
	var pgErr *pgconn.PgError
	b, rerr := fs.ReadFile(m.fsys, src.Path)
	if rerr != nil || !errors.As(partial.Err, &pgErr) || pgErr.Position <= 0 || stmt == "" {
		return migrationError(migration{name: name}, partial.Err)
	}
	file := string(b)
	at := strings.Index(file, stmt)
	if at < 0 {
		return migrationError(migration{name: name}, partial.Err)
	}
	return migrationErrorAt(migration{name: name, sql: file}, partial.Err, utf8.RuneCountInString(file[:at])+int(pgErr.Position))
}

// lastQuery remembers the last statement that failed on a connection.
type lastQuery struct {
	mu  sync.Mutex
	sql string
}

type querySQLKey struct{}

func (q *lastQuery) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, querySQLKey{}, data.SQL)
}

func (q *lastQuery) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	if sql, ok := ctx.Value(querySQLKey{}).(string); ok && data.Err != nil {
		q.mu.Lock()
		q.sql = sql
		q.mu.Unlock()
	}
}

func (q *lastQuery) get() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sql
}
