// Package ternmigrator builds a pgfixture schema with tern
// (github.com/jackc/tern/v2). It is a module of its own so that only its
// users' builds require tern.
//
//	var schema = ternmigrator.New(os.DirFS("migrations"))
//
//	func TestJob(t *testing.T) {
//		db := pgfixture.New(t, schema)
//		// ...
//	}
//
// Versions: tern v2.2.0 to v2.3.4 (v2.1.1's migrate.NewMigratorEx locks
// the version table on its connection, so the migrations cannot be read
// for the schema's hash before a database exists). This is a module of
// its own (github.com/twicekit/twicekit/pgfixture/ternmigrator): its go.mod
// requires tern v2.2.0, the oldest release it works with, so adding it
// never raises an app's tern; go.newest.mod requires v2.3.4, and CI runs
// the tests on both.
package ternmigrator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"

	"github.com/twicekit/twicekit/internal/migration"
	"github.com/twicekit/twicekit/pgfixture"
)

// DefaultVersionTable is the table tern records the schema's version in,
// as tern's command line names it.
const DefaultVersionTable = "public.schema_version"

// Options are tern's settings for a schema.
type Options struct {
	// VersionTable is the table tern records the version in; empty means
	// [DefaultVersionTable].
	VersionTable string
	// Data is what tern's templates see as ".", as tern's config file's
	// [data] section gives it.
	Data map[string]any
	// DisableTx runs each migration outside a transaction, one statement
	// at a time, as tern's MigratorOptions.DisableTx does.
	DisableTx bool
}

// New returns a pgfixture.Schema of tern migrations in fsys, applied by
// tern's own migrator with the default options: the files named
// NNN_name.sql at its root, in sequence, of which tern runs only the part
// above "---- create above / drop below ----". Templates are evaluated as
// tern evaluates them (files in subdirectories are the shared templates).
func New(fsys fs.FS) pgfixture.Schema { return NewWithOptions(fsys, Options{}) }

// NewWithOptions is New with tern's settings.
//
// The template key covers the migrations as tern evaluates them (with
// o.Data), their names, the version table and DisableTx. A directory tern
// cannot read (no migrations, a gap in the sequence, a template that does
// not parse) makes CreateDB fail with tern's reason; a failing migration's
// error names its file, with the line and column PostgreSQL reported.
func NewWithOptions(fsys fs.FS, o Options) pgfixture.Schema {
	if o.VersionTable == "" {
		o.VersionTable = DefaultVersionTable
	}
	m := &migrator{fsys: fsys, opts: o}
	h := sha256.New()
	fmt.Fprintf(h, "tern\n%s\ndisable-tx=%t\n", o.VersionTable, o.DisableTx)
	migs, err := m.load(context.Background(), nil)
	if err != nil {
		err = fmt.Errorf("ternmigrator: %w", err)
		fmt.Fprintf(h, "error\n%s", err)
	}
	for _, mig := range migs.Migrations {
		fmt.Fprintf(h, "%d %s\n%d\n%s\n", mig.Sequence, mig.Name, len(mig.UpSQL), mig.UpSQL)
	}
	m.Err = err
	m.hash = hex.EncodeToString(h.Sum(nil))
	return pgfixture.Migrations(m)
}

type migrator struct {
	migration.Loaded
	fsys fs.FS
	opts Options
	hash string
}

// load makes tern's migrator on conn (nil to read the files only) and
// loads the migrations into it.
func (m *migrator) load(ctx context.Context, conn *pgx.Conn) (*migrate.Migrator, error) {
	tm, err := migrate.NewMigratorEx(ctx, conn, m.opts.VersionTable, &migrate.MigratorOptions{DisableTx: m.opts.DisableTx})
	if err != nil {
		return nil, err
	}
	for k, v := range m.opts.Data {
		tm.Data[k] = v
	}
	if err := tm.LoadMigrations(m.fsys); err != nil {
		return tm, err
	}
	return tm, nil
}

func (m *migrator) Hash() string { return m.hash }

func (m *migrator) Migrate(ctx context.Context, url string) error {
	if m.Err != nil {
		return m.Err
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("ternmigrator: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tm, err := m.load(ctx, conn)
	if err != nil {
		return fmt.Errorf("ternmigrator: %w", err)
	}
	err = tm.Migrate(ctx)
	var pgErr migrate.MigrationPgError
	if errors.As(err, &pgErr) && pgErr.PgError != nil {
		return migration.Error("ternmigrator", migration.File{Name: pgErr.MigrationName, SQL: pgErr.Sql}, pgErr.PgError)
	}
	if err != nil {
		return fmt.Errorf("ternmigrator: %w", err)
	}
	return nil
}
