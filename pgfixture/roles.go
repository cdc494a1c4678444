package pgfixture

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Roles are the cluster's, not a database's: the role a migration creates
// stays on the server after its template is built, and the next build (of
// another schema, by another test binary on the same server) would fail on
// that migration's CREATE ROLE ("role … already exists"). pgfixture's own
// migrator (SQL, FS) skips a CREATE ROLE, CREATE USER or CREATE GROUP
// statement whose role exists when the build starts (existingRoles,
// skipExistingRoles); the role keeps the attributes it was created with. A
// role created twice within one build still fails, as it would in
// production. The other migrators (goosemigrator, golangmigrator,
// ternmigrator, the caller's own) run the migrations as they are; their
// error says what to write instead (roleHint).

// createRole matches the start of a statement creating a role, and the
// role's name (quoted or not).
var createRole = regexp.MustCompile(`(?is)^CREATE\s+(?:ROLE|USER|GROUP)\s+("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)`)

// mayCreateRole says whether a migration may create a role (cheaply, before
// its statements are read).
var mayCreateRole = regexp.MustCompile(`(?i)\bcreate\s+(role|user|group)\b`)

// existingRoles are the names of the server's roles.
func existingRoles(ctx context.Context, conn *pgx.Conn) (map[string]bool, error) {
	rows, err := conn.Query(ctx, `SELECT rolname FROM pg_roles`)
	if err != nil {
		return nil, fmt.Errorf("pgfixture: listing the server's roles: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("pgfixture: listing the server's roles: %w", err)
	}
	roles := make(map[string]bool, len(names))
	for _, n := range names {
		roles[n] = true
	}
	return roles, nil
}

// skipExistingRoles blanks the top-level statements of sql that create a
// role of roles (spaces in place of their text, lines and columns kept)
// and returns the roles skipped.
func skipExistingRoles(sql string, roles map[string]bool) (string, []string) {
	var skipped []string
	b := []byte(sql)
	for _, st := range statements(sql) {
		text := sql[st[0]:st[1]]
		m := createRole.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		name := m[1]
		if strings.HasPrefix(name, `"`) {
			name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
		} else {
			name = strings.ToLower(name)
			if name == "mapping" && strings.HasPrefix(strings.ToUpper(strings.Join(strings.Fields(text), " ")), "CREATE USER MAPPING") {
				continue // CREATE USER MAPPING, not a role
			}
		}
		if !roles[name] {
			continue
		}
		skipped = append(skipped, name)
		for i := st[0]; i < st[1]; i++ {
			if b[i] != '\n' && b[i] != '\r' {
				b[i] = ' '
			}
		}
	}
	return string(b), skipped
}

// statements returns the spans of the top-level statements of sql, each
// from its first token (comments and spaces before it left out) to before
// its semicolon. Quotes, dollar quotes and comments are skipped over.
func statements(sql string) [][2]int {
	var spans [][2]int
	start := -1
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			if j := strings.IndexByte(sql[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(sql)
			}
			continue
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			depth := 0
			for i < len(sql) {
				if strings.HasPrefix(sql[i:], "/*") {
					depth++
					i += 2
				} else if strings.HasPrefix(sql[i:], "*/") {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		}
		if start < 0 {
			start = i
		}
		switch {
		case c == ';':
			spans = append(spans, [2]int{start, i})
			start = -1
			i++
		case c == '\'' || c == '"':
			escapes := c == '\'' && i > 0 && (sql[i-1] == 'E' || sql[i-1] == 'e')
			i++
			for i < len(sql) {
				if escapes && sql[i] == '\\' {
					i += 2
					continue
				}
				if sql[i] == c {
					if i+1 < len(sql) && sql[i+1] == c {
						i += 2
						continue
					}
					break
				}
				i++
			}
			i++
		case c == '$':
			tag := dollarTag.FindString(sql[i:])
			if tag == "" {
				i++
				continue
			}
			if j := strings.Index(sql[i+len(tag):], tag); j >= 0 {
				i += len(tag) + j + len(tag)
			} else {
				i = len(sql)
			}
		default:
			i++
		}
	}
	if start >= 0 {
		spans = append(spans, [2]int{start, len(sql)})
	}
	return spans
}

// dollarTag matches a dollar quote's opening tag, e.g. $$ or $body$.
var dollarTag = regexp.MustCompile(`^\$([A-Za-z_][A-Za-z0-9_]*)?\$`)

// roleHint explains a migration's "role … already exists" (SQLSTATE 42710)
// raised by a migrator that runs the migrations as they are.
func roleHint(err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42710" || !strings.HasPrefix(pgErr.Message, "role ") {
		return err
	}
	return fmt.Errorf("%w\n\tpgfixture: roles belong to the whole server, and this one already has it (an earlier template build, another test binary or the server's own setup made it): write the migration so that it runs on a server that has the role, as on a cluster shared by two databases: DO $$ BEGIN CREATE ROLE … ; EXCEPTION WHEN duplicate_object THEN NULL; END $$; (pgfixture.FS and SQL skip the CREATE ROLE of a role the server has)", err)
}
