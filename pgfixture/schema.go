package pgfixture

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"

	"github.com/twicekit/twicekit/internal/migration"
)

// Migrator builds a schema on an empty database.
type Migrator interface {
	// Hash identifies the migrations' content: two migrators (or schemas) with the same
	// hash share a template database. A read error is folded into the hash and returned by Migrate.
	Hash() string
	// Migrate applies the migrations to the database at url (a postgres:// URL the
	// migrator may open its own connections to; close them before returning).
	Migrate(ctx context.Context, url string) error
}

// Schema is an ordered list of migrations: SQL text, files, or the
// migrators of tools such as goose and golang-migrate. A Schema is itself a
// [Migrator]. The zero Schema is empty.
//
// pgfixture applies a Schema once per [Schema.Hash] into a template
// database, while the fixture database being created holds its
// [ControlPoolConns] connections: a migrator may open up to that many
// connections at a time.
type Schema struct {
	steps []Migrator
	err   error // a read error, reported by CreateDB before any template is built
	hash  string
}

// SQL returns a Schema of the given migrations, applied in order; errors name
// them "migration 1", "migration 2", ...
func SQL(migrations ...string) Schema {
	migs := make([]migration.File, len(migrations))
	for i, m := range migrations {
		migs[i] = migration.File{Name: fmt.Sprintf("migration %d", i+1), SQL: m}
	}
	return Migrations(newSQLMigrator(migs, nil))
}

// FS returns a Schema of every *.sql file at the root of fsys, applied in
// name order and named by file name in errors. A read error is returned by
// CreateDB (and makes New fail). Of a sql-migrate file ("-- +migrate Up"
// and "-- +migrate Down") FS applies the Up section alone, as sql-migrate
// does, StatementBegin/StatementEnd and notransaction included. Of a dbmate
// file ("-- migrate:up" and "-- migrate:down") it applies the up block
// alone. FS refuses a directory that looks like goose's (a "-- +goose Up"
// annotation), golang-migrate's (*.up.sql and *.down.sql files) or tern's
// (its create/drop separator or a template action), whose down migrations
// it would run: the error names the right migrator (goosemigrator,
// golangmigrator or ternmigrator).
func FS(fsys fs.FS) Schema {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return Migrations(newSQLMigrator(nil, fmt.Errorf("pgfixture: listing migrations: %w", err)))
	}
	sort.Strings(names)
	var migs []migration.File
	var errs []error
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			errs = append(errs, fmt.Errorf("pgfixture: reading migration %s: %w", n, err))
			continue
		}
		migs = append(migs, migration.File{Name: n, SQL: string(b)})
	}
	if len(names) == 0 {
		errs = append(errs, errors.New("pgfixture: no *.sql files at the root of the migrations FS"))
	}
	if err := migration.OtherToolsFiles(migs); err != nil {
		errs = append(errs, err)
	}
	var sent []migration.File
	for _, m := range migs {
		ups, err := migration.UpSections(m)
		if err != nil {
			errs = append(errs, err)
		}
		sent = append(sent, ups...)
	}
	return Migrations(newSQLMigrator(sent, errors.Join(errs...)))
}

// Migrations returns a Schema built by the migrators in order (e.g. River's tables, then the app's goose
// migrations); its hash covers every migrator's hash in order.
//
// A Schema among ms contributes its own migrators, so Migrations(SQL(a),
// Migrations(b, c)) is Migrations(SQL(a), b, c). The Schema of a single
// migrator has that migrator's hash.
func Migrations(ms ...Migrator) Schema {
	var steps []Migrator
	var errs []error
	for i, m := range ms {
		switch m := m.(type) {
		case nil:
			errs = append(errs, fmt.Errorf("pgfixture: Migrations: migrator %d is nil", i+1))
		case Schema:
			if m.err != nil {
				errs = append(errs, m.err)
			}
			steps = append(steps, m.steps...)
		case *Schema:
			if m == nil {
				errs = append(errs, fmt.Errorf("pgfixture: Migrations: migrator %d is nil", i+1))
				continue
			}
			if m.err != nil {
				errs = append(errs, m.err)
			}
			steps = append(steps, m.steps...)
		default:
			// A built-in migrator's read error fails CreateDB before any
			// database is created.
			if err, _ := migration.LoadErr(m); err != nil {
				errs = append(errs, err)
			}
			steps = append(steps, m)
		}
	}
	err := errors.Join(errs...)
	s := Schema{steps: steps, err: err}
	if len(steps) == 1 && err == nil {
		s.hash = steps[0].Hash()
		return s
	}
	h := sha256.New()
	fmt.Fprintf(h, "migrations %d\n", len(steps))
	for _, m := range steps {
		fmt.Fprintf(h, "%s\n", m.Hash())
	}
	if err != nil {
		fmt.Fprintf(h, "error\n%s", err)
	}
	s.hash = hex.EncodeToString(h.Sum(nil))
	return s
}

// Hash identifies the schema's content (its migrators' hashes in order; for
// SQL and FS, the migrations' SQL in order); two schemas with the same hash
// share a template database.
func (s Schema) Hash() string {
	if s.hash == "" {
		return newSQLMigrator(nil, nil).hash
	}
	return s.hash
}

// Migrate applies the schema's migrators in order to the database at url.
// pgfixture calls it to build a template; call it yourself to build the
// same schema elsewhere.
func (s Schema) Migrate(ctx context.Context, url string) error {
	if s.err != nil {
		return s.err
	}
	for i, m := range s.steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := m.Migrate(ctx, url)
		if err == nil {
			continue
		}
		if _, builtin := migration.LoadErr(m); builtin {
			return err
		}
		return fmt.Errorf("pgfixture: migrator %d of %d (%T) failed: %w", i+1, len(s.steps), m, err)
	}
	return nil
}
