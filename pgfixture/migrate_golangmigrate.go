package pgfixture

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
)

// GolangMigrate returns a Schema of golang-migrate migrations
// (github.com/golang-migrate/migrate/v4) at the root of fsys, applied by
// golang-migrate itself (its iofs source and pgx/v5 database driver): the
// up migrations (000001_name.up.sql, ...) in version order; down
// migrations are never run. golang-migrate records the version in its
// schema_migrations table, which is part of the template like any other.
//
// The hash covers the up migrations' names and content. A directory
// golang-migrate cannot read (no up migration, a duplicate version) makes
// CreateDB fail with its reason; a failing migration's error names its file
// and, when PostgreSQL reports a position, the line and column in it.
func GolangMigrate(fsys fs.FS) Schema {
	return Migrations(newGolangMigrator(fsys))
}

type golangMigrator struct {
	fsys fs.FS
	ups  []migration // by version; name is the file name
	n    int         // versions, with an up file or not
	err  error
	hash string
}

func newGolangMigrator(fsys fs.FS) *golangMigrator {
	m := &golangMigrator{fsys: fsys}
	m.err = m.load()
	h := sha256.New()
	fmt.Fprintf(h, "golang-migrate\n")
	for _, u := range m.ups {
		fmt.Fprintf(h, "%s\n%d\n%s\n", u.name, len(u.sql), u.sql)
	}
	if m.err != nil {
		fmt.Fprintf(h, "error\n%s", m.err)
	}
	m.hash = hex.EncodeToString(h.Sum(nil))
	return m
}

// load reads the migrations as golang-migrate's iofs source does.
func (m *golangMigrator) load() error {
	src, err := iofs.New(m.fsys, ".")
	if err != nil {
		return fmt.Errorf("pgfixture: golang-migrate: %w", err)
	}
	_ = src.Close()
	entries, err := fs.ReadDir(m.fsys, ".")
	if err != nil {
		return fmt.Errorf("pgfixture: golang-migrate: %w", err)
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
			errs = append(errs, fmt.Errorf("pgfixture: golang-migrate: reading %s: %w", e.Name(), err))
			continue
		}
		m.ups = append(m.ups, migration{name: e.Name(), sql: string(b)})
	}
	sort.Slice(m.ups, func(i, j int) bool { return upVersion(m.ups[i].name) < upVersion(m.ups[j].name) })
	m.n = len(versions)
	if len(m.ups) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("pgfixture: golang-migrate: no up migrations (NNN_name.up.sql) at the root of the migrations FS"))
	}
	return errors.Join(errs...)
}

func upVersion(name string) uint {
	p, _ := source.DefaultParse(name)
	return p.Version
}

func (m *golangMigrator) Hash() string   { return m.hash }
func (m *golangMigrator) loadErr() error { return m.err }

func (m *golangMigrator) Migrate(ctx context.Context, url string) (err error) {
	if m.err != nil {
		return m.err
	}
	db, err := openSQL(url)
	if err != nil {
		return fmt.Errorf("pgfixture: golang-migrate: %w", err)
	}
	driver, err := migratepgx.WithInstance(db, &migratepgx.Config{})
	if err != nil {
		_ = db.Close()
		return fmt.Errorf("pgfixture: golang-migrate: %w", err)
	}
	src, err := iofs.New(m.fsys, ".")
	if err != nil {
		_ = driver.Close()
		return fmt.Errorf("pgfixture: golang-migrate: %w", err)
	}
	mg, err := migrate.NewWithInstance("iofs", src, "pgx5", driver)
	if err != nil {
		_ = src.Close()
		_ = driver.Close()
		return fmt.Errorf("pgfixture: golang-migrate: %w", err)
	}
	defer func() {
		serr, derr := mg.Close()
		if err == nil && (serr != nil || derr != nil) {
			err = fmt.Errorf("pgfixture: golang-migrate: closing: %w", errors.Join(serr, derr))
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
func (m *golangMigrator) stepError(mg *migrate.Migrate, err error) error {
	v, dirty, verr := mg.Version()
	if verr != nil || !dirty {
		return fmt.Errorf("pgfixture: golang-migrate: %w", err)
	}
	for _, u := range m.ups {
		if upVersion(u.name) != v {
			continue
		}
		var dbErr migratedb.Error
		if errors.As(err, &dbErr) && dbErr.OrigErr != nil {
			return migrationError(u, dbErr.OrigErr)
		}
		return migrationError(u, err)
	}
	return fmt.Errorf("pgfixture: golang-migrate: version %d: %w", v, err)
}
