// Package golangmigrator builds a pgfixture schema with golang-migrate
// (github.com/golang-migrate/migrate/v4). It is a package of its own so that
// only its users compile golang-migrate.
//
//	var schema = golangmigrator.New(os.DirFS("migrations"))
//
//	func TestJob(t *testing.T) {
//		db := pgfixture.New(t, schema)
//		// ...
//	}
//
// Versions: golang-migrate v4.16.1 to v4.20.1 (v4.15.2 has no
// database/pgx/v5 driver). This is a module of its own
// (github.com/twicekit/twicekit/pgfixture/golangmigrator): its go.mod
// requires golang-migrate v4.16.1, the oldest release whose API it uses,
// so adding it never raises an app's golang-migrate; go.newest.mod
// requires v4.20.1, and CI runs the tests on both.
package golangmigrator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"

	"github.com/golang-migrate/migrate/v4"
	migratedb "github.com/golang-migrate/migrate/v4/database"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source"
	"github.com/golang-migrate/migrate/v4/source/iofs"

	"github.com/twicekit/twicekit/internal/migration"
	"github.com/twicekit/twicekit/pgfixture"
)

// New returns a pgfixture.Schema of the golang-migrate migrations at the
// root of fsys, applied by
// golang-migrate itself (its iofs source and pgx/v5 database driver): the
// up migrations (000001_name.up.sql, ...) in version order; down
// migrations are never run. golang-migrate records the version in its
// schema_migrations table, which is part of the template like any other.
//
// The hash covers the up migrations' names and content. A directory
// golang-migrate cannot read (no up migration, a duplicate version) makes
// CreateDB fail with its reason; a failing migration's error names its file
// and, when PostgreSQL reports a position, the line and column in it.
func New(fsys fs.FS) pgfixture.Schema {
	return NewWithOptions(fsys, Options{})
}

// Options are golang-migrate's settings for a schema.
type Options struct {
	// Path is the directory of the migrations in fsys, as iofs.New takes
	// it; empty means the root.
	Path string
	// Database is the pgx/v5 driver's configuration, passed to it as it is
	// (MigrationsTable, SchemaName, MultiStatementEnabled, ...); nil means
	// the driver's defaults.
	Database *migratepgx.Config
}

// NewWithOptions is New with golang-migrate's settings. The template key
// covers, besides the up migrations, the path and the driver's settings
// that change what is built or how it is sent: MigrationsTable,
// MigrationsTableQuoted, SchemaName, MultiStatementEnabled and
// MultiStatementMaxSize.
func NewWithOptions(fsys fs.FS, o Options) pgfixture.Schema {
	return pgfixture.Migrations(newMigrator(fsys, o))
}

type migrator struct {
	migration.Loaded
	fsys fs.FS // the migrations' directory (o.Path of the caller's fsys)
	db   migratepgx.Config
	ups  []migration.File // by version; Name is the file name
	n    int              // versions, with an up file or not
	hash string
}

func newMigrator(fsys fs.FS, o Options) *migrator {
	m := &migrator{fsys: fsys}
	if o.Database != nil {
		m.db = *o.Database
	}
	if o.Path != "" && o.Path != "." {
		sub, err := fs.Sub(fsys, o.Path)
		if err != nil {
			m.Err = fmt.Errorf("golangmigrator: %w", err)
		}
		m.fsys = sub
	}
	if m.Err == nil {
		m.Err = m.load()
	}
	h := sha256.New()
	fmt.Fprintf(h, "golang-migrate\n")
	if o.Path != "" || o.Database != nil {
		fmt.Fprintf(h, "path=%q table=%q quoted=%t schema=%q multi=%t/%d\n", o.Path, m.db.MigrationsTable, m.db.MigrationsTableQuoted,
			m.db.SchemaName, m.db.MultiStatementEnabled, m.db.MultiStatementMaxSize)
	}
	for _, u := range m.ups {
		fmt.Fprintf(h, "%s\n%d\n%s\n", u.Name, len(u.SQL), u.SQL)
	}
	if m.Err != nil {
		fmt.Fprintf(h, "error\n%s", m.Err)
	}
	m.hash = hex.EncodeToString(h.Sum(nil))
	return m
}

// load reads the migrations as golang-migrate's iofs source does.
func (m *migrator) load() error {
	src, err := iofs.New(m.fsys, ".")
	if err != nil {
		return fmt.Errorf("golangmigrator: %w", err)
	}
	_ = src.Close()
	entries, err := fs.ReadDir(m.fsys, ".")
	if err != nil {
		return fmt.Errorf("golangmigrator: %w", err)
	}
	versions := map[uint]bool{}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		p, err := source.DefaultParse(e.Name())
		if err != nil {
			continue
		}
		versions[p.Version] = true
		if p.Direction != source.Up {
			continue
		}
		b, err := fs.ReadFile(m.fsys, e.Name())
		if err != nil {
			errs = append(errs, fmt.Errorf("golangmigrator: reading %s: %w", e.Name(), err))
			continue
		}
		m.ups = append(m.ups, migration.File{Name: e.Name(), SQL: string(b)})
	}
	sort.Slice(m.ups, func(i, j int) bool { return upVersion(m.ups[i].Name) < upVersion(m.ups[j].Name) })
	m.n = len(versions)
	if len(m.ups) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("golangmigrator: no up migrations (NNN_name.up.sql) at the root of the migrations FS"))
	}
	return errors.Join(errs...)
}

func upVersion(name string) uint {
	p, _ := source.DefaultParse(name)
	return p.Version
}

func (m *migrator) Hash() string { return m.hash }

func (m *migrator) Migrate(ctx context.Context, url string) (err error) {
	if m.Err != nil {
		return m.Err
	}
	db, err := migration.OpenSQL(url)
	if err != nil {
		return fmt.Errorf("golangmigrator: %w", err)
	}
	cfg := m.db
	driver, err := migratepgx.WithInstance(db, &cfg)
	if err != nil {
		_ = db.Close()
		return fmt.Errorf("golangmigrator: %w", err)
	}
	src, err := iofs.New(m.fsys, ".")
	if err != nil {
		_ = driver.Close()
		return fmt.Errorf("golangmigrator: %w", err)
	}
	mg, err := migrate.NewWithInstance("iofs", src, "pgx5", driver)
	if err != nil {
		_ = src.Close()
		_ = driver.Close()
		return fmt.Errorf("golangmigrator: %w", err)
	}
	defer func() {
		serr, derr := mg.Close()
		if err == nil && (serr != nil || derr != nil) {
			err = fmt.Errorf("golangmigrator: closing: %w", errors.Join(serr, derr))
		}
	}()
	// One version per step: after a failure golang-migrate leaves no
	// migration read ahead (and no goroutine waiting to hand it over).
	for range m.n {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := mg.Steps(1); err != nil {
			return m.stepError(mg, err)
		}
	}
	return nil
}

// stepError names the up migration that failed, with the line and column
// PostgreSQL reported (golang-migrate sends each file as one statement).
func (m *migrator) stepError(mg *migrate.Migrate, err error) error {
	v, dirty, verr := mg.Version()
	if verr != nil || !dirty {
		return fmt.Errorf("golangmigrator: %w", err)
	}
	for _, u := range m.ups {
		if upVersion(u.Name) != v {
			continue
		}
		var dbErr migratedb.Error
		if errors.As(err, &dbErr) && dbErr.OrigErr != nil {
			return migration.Error("golangmigrator", u, dbErr.OrigErr)
		}
		return migration.Error("golangmigrator", u, err)
	}
	return fmt.Errorf("golangmigrator: version %d: %w", v, err)
}
