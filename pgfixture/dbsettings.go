package pgfixture

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A migration's ALTER DATABASE … SET (and ALTER ROLE … IN DATABASE … SET)
// is a setting of the template database, kept in pg_db_role_setting.
// CREATE DATABASE … TEMPLATE copies no such setting, so each clone gets
// the template's again (copyDatabaseSettings): a session of the clone sees
// the search_path the migrations set, as a session of the application's
// database does.

// listQuoted are the settings whose stored value is a list of elements
// quoted as identifiers ("search_path=app, \"$user\", public"): the stored
// value is written back as it is. Any other value is written back as one
// string literal.
var listQuoted = map[string]bool{
	"search_path": true, "temp_tablespaces": true,
	"local_preload_libraries": true, "session_preload_libraries": true,
}

// copyDatabaseSettings gives database name the settings of database tpl,
// for every role and for the database itself.
func copyDatabaseSettings(ctx context.Context, conn *pgxpool.Conn, tpl, name string) error {
	rows, err := conn.Query(ctx, `
SELECT coalesce(r.rolname, ''), s.setconfig
FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase LEFT JOIN pg_roles r ON r.oid = s.setrole
WHERE d.datname = $1 ORDER BY 1`, tpl)
	if err != nil {
		return fmt.Errorf("pgfixture: reading the settings of template %s: %w", tpl, err)
	}
	type setting struct {
		role   string
		config []string
	}
	settings, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (setting, error) {
		var s setting
		return s, r.Scan(&s.role, &s.config)
	})
	if err != nil {
		return fmt.Errorf("pgfixture: reading the settings of template %s: %w", tpl, err)
	}
	for _, s := range settings {
		target := "DATABASE " + pgx.Identifier{name}.Sanitize()
		if s.role != "" {
			target = "ROLE " + pgx.Identifier{s.role}.Sanitize() + " IN " + target
		}
		for _, kv := range s.config {
			q := alterSet(target, kv)
			if _, err := conn.Exec(ctx, q); err != nil {
				return fmt.Errorf("pgfixture: giving %s the setting %q that the migrations set on the template (%s): %w", name, kv, q, err)
			}
		}
	}
	return nil
}

// alterSet is the ALTER statement that sets kv ("name=value", as
// pg_db_role_setting keeps it) on target.
func alterSet(target, kv string) string {
	k, v, _ := strings.Cut(kv, "=")
	value := quoteLiteral(v)
	if listQuoted[strings.ToLower(k)] && v != `""` && v != "" {
		value = v
	}
	return "ALTER " + target + " SET " + pgx.Identifier(strings.Split(k, ".")).Sanitize() + " TO " + value
}
