package pgfixture

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/internal/pgserver"
)

// lockClass is the first key of pgfixture's two-key advisory locks ("tw").
const lockClass int32 = 0x7477

func templateName(hash string) string { return dbPrefix + "t_" + templateKey(hash)[:16] }

func lockKey(hash string) int32 {
	b, _ := hex.DecodeString(templateKey(hash)[:8])
	return int32(binary.BigEndian.Uint32(b))
}

// templateKey is a schema's hash as template names and locks use it: the
// hash itself when it is at least 16 lower-case hexadecimal digits (every
// built-in migrator's), else the SHA-256 of it, so any Hash() a migrator
// returns ("stamp v1", "", a version number) is a valid key.
func templateKey(hash string) string {
	if len(hash) >= 16 && strings.Trim(hash, "0123456789abcdef") == "" {
		return hash
	}
	sum := sha256.Sum256([]byte("twicekit migrator hash\x00" + hash))
	return hex.EncodeToString(sum[:])
}

// withLock runs f on one admin connection holding pgfixture's advisory lock
// for hash, shared or exclusive. The lock is session-level, so it also guards
// against other test binaries on the same server.
func (s *Server) withLock(ctx context.Context, hash string, exclusive bool, f func(*pgxpool.Conn) error) error {
	conn, err := s.admin.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	fn := "pg_advisory_lock_shared"
	if exclusive {
		fn = "pg_advisory_lock"
	}
	if _, err := conn.Exec(ctx, "SELECT "+fn+"($1, $2)", lockClass, lockKey(hash)); err != nil {
		return err
	}
	defer func() {
		unlock := "SELECT pg_advisory_unlock_shared($1, $2)"
		if exclusive {
			unlock = "SELECT pg_advisory_unlock($1, $2)"
		}
		if _, err := conn.Exec(context.Background(), unlock, lockClass, lockKey(hash)); err != nil {
			// Leave no lock behind: drop the session.
			_ = conn.Conn().Close(context.Background())
		}
	}()
	return f(conn)
}

// cloneTemplate creates database name as a copy of schema's template,
// building the template first if no complete one exists.
func (s *Server) cloneTemplate(ctx context.Context, schema Schema, name string) error {
	hash := schema.Hash()
	tpl := templateName(hash)
	s.mu.Lock()
	s.templates[hash] = tpl
	s.mu.Unlock()
	for attempt := 0; attempt < 3; attempt++ {
		var cloned bool
		err := s.withLock(ctx, hash, false, func(conn *pgxpool.Conn) error {
			ready, err := templateReady(ctx, conn, tpl)
			if err != nil || !ready {
				return err
			}
			_, err = conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s",
				pgx.Identifier{name}.Sanitize(), pgx.Identifier{tpl}.Sanitize()))
			if err != nil {
				return fmt.Errorf("cloning template %s: %w", tpl, err)
			}
			cloned = true
			if err := copyDatabaseSettings(ctx, conn, tpl, name); err != nil { // dbsettings.go
				return err
			}
			_, err = conn.Exec(ctx, fmt.Sprintf("COMMENT ON DATABASE %s IS %s",
				pgx.Identifier{name}.Sanitize(), quoteLiteral(pgserver.Self.String())))
			return err
		})
		if err != nil || cloned {
			return s.scrub.Error(err)
		}
		err = s.withLock(ctx, hash, true, func(conn *pgxpool.Conn) error {
			return s.buildTemplate(ctx, conn, schema, tpl)
		})
		if err != nil {
			return s.scrub.Error(err)
		}
	}
	return fmt.Errorf("pgfixture: template %s vanished repeatedly while cloning it", tpl)
}

func templateReady(ctx context.Context, conn *pgxpool.Conn, tpl string) (bool, error) {
	var ready bool
	err := conn.QueryRow(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1", tpl).Scan(&ready)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return ready, err
}

// buildTemplate applies schema's migrations to a new template database; the
// caller holds the exclusive lock. A database of that name that is not marked
// as a template is a build that died half way: it is dropped and rebuilt.
func (s *Server) buildTemplate(ctx context.Context, conn *pgxpool.Conn, schema Schema, tpl string) error {
	ready, err := templateReady(ctx, conn, tpl)
	if err != nil || ready {
		return err
	}
	if err := s.dropDatabaseOn(ctx, conn, tpl); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE template0 ENCODING 'UTF8'", pgx.Identifier{tpl}.Sanitize())); err != nil {
		return fmt.Errorf("pgfixture: creating template %s: %w", tpl, err)
	}
	if err := s.migrate(ctx, schema, tpl); err != nil {
		if derr := s.dropDatabaseOn(ctx, conn, tpl); derr != nil {
			err = errors.Join(err, derr)
		}
		return err
	}
	_, err = conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s IS_TEMPLATE true", pgx.Identifier{tpl}.Sanitize()))
	if err != nil {
		return fmt.Errorf("pgfixture: marking %s as a template: %w", tpl, err)
	}
	_, err = conn.Exec(ctx, fmt.Sprintf("COMMENT ON DATABASE %s IS %s", pgx.Identifier{tpl}.Sanitize(),
		quoteLiteral(templateComment(schema.Hash()))))
	return err
}

// templateTag starts a template's comment: the schema's hash follows, then
// templateBuiltBy and the owner of the process that built it, so that the
// next start on the server drops the templates of killed processes.
const (
	templateTag     = "twicekit template "
	templateBuiltBy = " built by "
)

func templateComment(hash string) string {
	return templateTag + hash + templateBuiltBy + pgserver.Self.String()
}

// parseTemplateComment returns the schema's hash and the builder of a
// template from its comment; ok is false for a comment of another shape
// (an older twicekit's, which names no builder).
func parseTemplateComment(c string) (hash string, builder pgserver.Owner, ok bool) {
	rest, found := strings.CutPrefix(c, templateTag)
	if !found {
		return "", pgserver.Owner{}, false
	}
	i := strings.LastIndex(rest, templateBuiltBy)
	if i < 0 {
		return "", pgserver.Owner{}, false
	}
	builder, ok = pgserver.ParseOwner(rest[i+len(templateBuiltBy):])
	return rest[:i], builder, ok
}

// dropStaleTemplates drops the templates built by dead processes of this
// machine. A live process that still clones one finds it gone and builds
// it again; one cloning it right now holds its lock, and the template
// stays.
func (s *Server) dropStaleTemplates(ctx context.Context) error {
	rows, err := s.admin.Query(ctx, `SELECT coalesce(shobj_description(oid, 'pg_database'), '')
		FROM pg_database WHERE datname LIKE 'twicekit\_t\_%' AND datistemplate ORDER BY datname`)
	if err != nil {
		return fmt.Errorf("listing stale fixture templates: %w", err)
	}
	comments, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("listing stale fixture templates: %w", err)
	}
	for _, c := range comments {
		hash, builder, ok := parseTemplateComment(c)
		if !ok || !builder.Dead() {
			continue
		}
		if err := s.dropTemplate(ctx, hash); err != nil {
			return err
		}
	}
	return nil
}

// migrate applies schema to dbname through its migrators, which connect
// by themselves; it runs while a fixture database is being created, on the
// connections reserved for that database's control pool (not open yet).
func (s *Server) migrate(ctx context.Context, schema Schema, dbname string) error {
	return s.withExtensionHint(roleHint(schema.Migrate(ctx, s.databaseURL(dbname)))) // roles.go
}

// dropTemplate drops the template of hash unless another process is
// cloning or building it right now.
func (s *Server) dropTemplate(ctx context.Context, hash string) error {
	conn, err := s.admin.Acquire(ctx)
	if err != nil {
		return s.scrub.Error(err)
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", lockClass, lockKey(hash)).Scan(&got); err != nil {
		return s.scrub.Error(err)
	}
	if !got {
		return nil
	}
	defer func() {
		if _, err := conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1, $2)", lockClass, lockKey(hash)); err != nil {
			_ = conn.Conn().Close(context.Background())
		}
	}()
	tpl := templateName(hash)
	_, err = conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s IS_TEMPLATE false", pgx.Identifier{tpl}.Sanitize()))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "3D000" {
		return nil // already gone
	}
	if err != nil {
		return s.scrub.Error(fmt.Errorf("pgfixture: unmarking template %s: %w", tpl, err))
	}
	return s.dropDatabaseOn(ctx, conn, tpl)
}

func quoteLiteral(s string) string {
	out := make([]byte, 0, len(s)+2)
	out = append(out, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}
