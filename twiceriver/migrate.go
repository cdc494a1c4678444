package twiceriver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// riverVersion is the River release whose migrations Migrations applies;
// it is the version pinned in go.mod.
const riverVersion = "v0.51.2"

// Migrator applies River's own migrations (the main line, every version,
// as rivermigrate does) to a database. It is a pgfixture.Migrator: with
// pgfixture.Migrations, River's tables come first, the application's after
// them. It lives here, not in pgfixture, so that only users of River
// compile River.
type Migrator struct{}

// Migrations returns the migrator of River's tables (river_job,
// river_queue, river_leader, river_migration, ...), applied with River's own
// rivermigrate through its pgx driver:
//
//	schema := pgfixture.Migrations(twiceriver.Migrations(), pgfixture.FS(appMigrations))
func Migrations() Migrator { return Migrator{} }

// Hash identifies River's migrations: River's version and every migration's
// version and SQL. Equal hashes share a template database.
func (Migrator) Hash() string {
	h := sha256.New()
	fmt.Fprintf(h, "river %s\n", riverVersion)
	for _, m := range riverMigrations() {
		fmt.Fprintf(h, "%d %d\n%s\n", m.Version, len(m.SQLUp), m.SQLUp)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Migrate applies every River migration to the database at url with
// rivermigrate, and closes its connections.
func (Migrator) Migrate(ctx context.Context, url string) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("twiceriver: River migrations: connecting: %w", err)
	}
	defer pool.Close()
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quietLogger()})
	if err != nil {
		return fmt.Errorf("twiceriver: River migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("twiceriver: River migrations failed: %w", err)
	}
	return nil
}

// riverMigrations lists River's migrations (no database is touched).
func riverMigrations() []rivermigrate.Migration {
	m, err := rivermigrate.New(riverpgxv5.New(nil), &rivermigrate.Config{Logger: quietLogger()})
	if err != nil {
		return nil
	}
	return m.AllVersions()
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
