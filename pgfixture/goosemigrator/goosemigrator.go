// Package goosemigrator builds a pgfixture schema with goose
// (github.com/pressly/goose/v3). It is a package of its own so that only
// its users compile goose.
//
//	var schema = goosemigrator.New(os.DirFS("migrations"))
//
//	func TestJob(t *testing.T) {
//		db := pgfixture.New(t, schema)
//		// ...
//	}
//
// Versions: goose v3.23.0 to v3.30.1 (v3.22.1 lacks goose.WithLogger).
// This is a module of its own
// (github.com/twicekit/twicekit/pgfixture/goosemigrator): its go.mod
// requires goose v3.23.0, the oldest release whose API it uses, so adding
// it never raises an app's goose; go.newest.mod requires v3.30.1, and CI
// runs the tests on both.
package goosemigrator

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

	"github.com/twicekit/twicekit/internal/migration"
	"github.com/twicekit/twicekit/pgfixture"
)

// New returns a pgfixture.Schema of goose migrations, applied by goose's own
// Provider: the *.sql files at the root of fsys, of
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
func New(fsys fs.FS, goMigrations ...*goose.Migration) pgfixture.Schema {
	return NewWithOptions(fsys, Options{GoMigrations: goMigrations})
}

// Options are goose's settings for a schema.
type Options struct {
	// GoMigrations are Go migrations, as New takes them.
	GoMigrations []*goose.Migration
	// TableName is goose's version table; empty means goose's
	// goose_db_version.
	TableName string
	// AllowMissing applies migrations whose version is below one already
	// applied (goose.WithAllowOutofOrder), as when two directories are
	// migrated into one version table.
	AllowMissing bool
	// Provider holds more of goose's provider options, passed to
	// goose.NewProvider after the ones above. They are functions, which
	// cannot be hashed: those that change the schema (goose.WithStore,
	// goose.WithDisableVersioning) need Key.
	Provider []goose.ProviderOption
	// Key is hashed into the template key: change it when Provider
	// changes what the migrations build.
	Key string
}

// NewWithOptions is New with goose's settings. The template key covers
// the migrations goose lists with these options (goose.WithExcludeNames
// and goose.WithExcludeVersions included), TableName, AllowMissing and
// Key.
func NewWithOptions(fsys fs.FS, o Options) pgfixture.Schema {
	return pgfixture.Migrations(newMigrator(fsys, o))
}

type migrator struct {
	migration.Loaded
	fsys fs.FS
	opts Options
	hash string
}

func newMigrator(fsys fs.FS, o Options) *migrator {
	m := &migrator{fsys: fsys, opts: o}
	h := sha256.New()
	fmt.Fprintf(h, "goose\n")
	if o.TableName != "" || o.AllowMissing || o.Key != "" {
		fmt.Fprintf(h, "table=%q allow-missing=%t key=%q\n", o.TableName, o.AllowMissing, o.Key)
	}
	// A provider on a database that is never opened lists the migrations
	// goose would apply, as goose sees them.
	db := migration.Unopened()
	p, err := m.provider(db)
	if err == nil {
		for _, src := range p.ListSources() {
			fmt.Fprintf(h, "%s %d %s\n", src.Type, src.Version, path.Base(src.Path))
			if src.Type != goose.TypeSQL {
				continue
			}
			b, rerr := fs.ReadFile(fsys, src.Path)
			if rerr != nil {
				err = errors.Join(err, fmt.Errorf("goosemigrator: reading %s: %w", src.Path, rerr))
				continue
			}
			fmt.Fprintf(h, "%d\n%s\n", len(b), b)
		}
	} else {
		err = fmt.Errorf("goosemigrator: %w", err)
	}
	_ = db.Close()
	if err != nil {
		fmt.Fprintf(h, "error\n%s", err)
	}
	m.Err = err
	m.hash = hex.EncodeToString(h.Sum(nil))
	return m
}

func (m *migrator) provider(db *sql.DB) (*goose.Provider, error) {
	opts := []goose.ProviderOption{goose.WithLogger(goose.NopLogger())}
	if len(m.opts.GoMigrations) > 0 {
		opts = append(opts, goose.WithGoMigrations(m.opts.GoMigrations...))
	}
	dialect := database.DialectPostgres
	if m.opts.TableName != "" {
		// goose.WithTableName is newer than the oldest goose supported: a
		// store of that table, with no dialect, works on every release.
		store, err := database.NewStore(database.DialectPostgres, m.opts.TableName)
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithStore(store))
		dialect = ""
	}
	if m.opts.AllowMissing {
		opts = append(opts, goose.WithAllowOutofOrder(true))
	}
	opts = append(opts, m.opts.Provider...)
	return goose.NewProvider(dialect, db, m.fsys, opts...)
}

func (m *migrator) Hash() string { return m.hash }

func (m *migrator) Migrate(ctx context.Context, url string) error {
	if m.Err != nil {
		return m.Err
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("goosemigrator: %w", err)
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
		return fmt.Errorf("goosemigrator: %w", err)
	}
	_, err = p.Up(ctx)
	var partial *goose.PartialError
	if errors.As(err, &partial) {
		return m.failed(partial, last.get())
	}
	if err != nil {
		return fmt.Errorf("goosemigrator: %w", err)
	}
	return nil
}

// failed describes the migration that failed: a SQL file by name, with the
// line and column when PostgreSQL gives a position in the failing
// statement (stmt, found in the file as goose's parser cut it); a Go
// migration by version.
func (m *migrator) failed(partial *goose.PartialError, stmt string) error {
	src := partial.Failed.Source
	name := path.Base(src.Path)
	if src.Type == goose.TypeGo {
		if src.Path != "" {
			name = fmt.Sprintf("%d (%s)", src.Version, name)
		} else {
			name = fmt.Sprintf("%d", src.Version)
		}
		return fmt.Errorf("goosemigrator: Go migration %s failed: %w", name, partial.Err)
	}
	var pgErr *pgconn.PgError
	b, rerr := fs.ReadFile(m.fsys, src.Path)
	if rerr != nil || !errors.As(partial.Err, &pgErr) || pgErr.Position <= 0 || stmt == "" {
		return migration.Error("goosemigrator", migration.File{Name: name}, partial.Err)
	}
	file := string(b)
	at := strings.Index(file, stmt)
	if at < 0 {
		return migration.Error("goosemigrator", migration.File{Name: name}, partial.Err)
	}
	return migration.ErrorAt("goosemigrator", migration.File{Name: name, SQL: file}, partial.Err, utf8.RuneCountInString(file[:at])+int(pgErr.Position))
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
