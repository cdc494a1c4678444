package pgfixture

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/internal/migration"
)

// sqlMigrator applies SQL migrations in order, each in one round trip
// (PostgreSQL's simple protocol runs a migration of many statements at once).
type sqlMigrator struct {
	migration.Loaded
	migs []migration.File
	hash string
}

func newSQLMigrator(migs []migration.File, err error) *sqlMigrator {
	h := sha256.New()
	for _, m := range migs {
		fmt.Fprintf(h, "%d\n%s\n", len(m.SQL), m.SQL)
	}
	if err != nil {
		fmt.Fprintf(h, "error\n%s", err)
	}
	return &sqlMigrator{Loaded: migration.Loaded{Err: err}, migs: migs, hash: hex.EncodeToString(h.Sum(nil))}
}

func (m *sqlMigrator) Hash() string { return m.hash }

func (m *sqlMigrator) Migrate(ctx context.Context, url string) error {
	if m.Err != nil {
		return m.Err
	}
	if len(m.migs) == 0 {
		return nil
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("pgfixture: connecting to apply migrations: %w", err)
	}
	defer conn.Close(context.Background())
	var roles map[string]bool // the server's roles when the build starts (roles.go)
	for _, mig := range m.migs {
		if mayCreateRole.MatchString(mig.SQL) {
			if roles == nil {
				if roles, err = existingRoles(ctx, conn); err != nil {
					return err
				}
			}
			mig.SQL, _ = skipExistingRoles(mig.SQL, roles)
		}
		if _, err := conn.PgConn().Exec(ctx, mig.SQL).ReadAll(); err != nil {
			return migration.Error("pgfixture", mig, err)
		}
	}
	return nil
}
