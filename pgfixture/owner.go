package pgfixture

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/twicekit/twicekit/internal/pgserver"
)

// dropStale drops fixture databases and templates left by dead processes of
// this machine, and kept databases that expired (see kept.go). Other kept databases (their
// comment says "kept") are left alone.
func (s *Server) dropStale(ctx context.Context) error {
	dbs, err := s.fixtureDatabases(ctx, s.admin)
	if err != nil {
		return fmt.Errorf("listing stale fixture databases: %w", err)
	}
	now := time.Now()
	for _, d := range dbs {
		o, ok := pgserver.ParseOwner(ownerPart(d.comment))
		kept, _, _ := keptInfo(d.comment)
		drop := expiredKept(d.comment, now) || (ok && !kept && o.Dead())
		if !drop {
			continue
		}
		if err := s.dropDatabase(ctx, d.name); err != nil {
			return err
		}
	}
	return s.dropStaleTemplates(ctx)
}

// ownerPart is the owner's part of a database comment (before " kept").
func ownerPart(comment string) string {
	owner, _, _ := strings.Cut(comment, " kept")
	return owner
}

// dropDatabase drops a database of pgfixture's own (the name must carry the
// prefix), disconnecting its sessions, on a connection of the admin pool.
func (s *Server) dropDatabase(ctx context.Context, name string) error {
	return s.dropDatabaseOn(ctx, s.admin, name)
}

// execer is an admin pool or one of its connections.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// execQuerier is an admin pool or one of its connections, for queries too.
type execQuerier interface {
	execer
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// dropDatabaseOn is dropDatabase on conn: a caller that already holds an
// admin connection uses it, so that it never waits for a second one (eight
// callers each holding one and waiting for another would wait forever).
func (s *Server) dropDatabaseOn(ctx context.Context, conn execer, name string) error {
	if !strings.HasPrefix(name, dbPrefix) {
		return fmt.Errorf("pgfixture: refusing to drop %q: not a pgfixture database", name)
	}
	sql := "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize()
	if s.version >= 130000 {
		sql += " WITH (FORCE)"
	} else if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, name); err != nil {
		// Before 13 there is no FORCE: the database's sessions are ended
		// first, and DROP DATABASE waits (up to 5 s) for them to go.
		return s.scrub.Error(fmt.Errorf("pgfixture: ending the sessions of database %s: %w", name, err))
	}
	if _, err := conn.Exec(ctx, sql); err != nil {
		return s.scrub.Error(fmt.Errorf("pgfixture: dropping database %s: %w", name, err))
	}
	return nil
}
