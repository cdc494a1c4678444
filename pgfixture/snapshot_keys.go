package pgfixture

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// GeneratedKeys keeps the serial and identity columns that Snapshot leaves
// out by default, and marks them and the columns referencing them through
// a foreign key as generated keys (see Snapshot.GeneratedKey): values a
// sequence chose, which a comparison may take up to one consistent renaming
// (package twice does).
func GeneratedKeys() SnapshotOption {
	return optFunc(func(o *snapOpts) { o.generatedKeys = true })
}

// GeneratedKey names the generated key a column holds: for a serial or
// identity column its own "table.column", for a column referencing one
// through a foreign key the referenced "table.column" (tables named as by
// Tables); "" for any other column, and in a snapshot read without
// GeneratedKeys.
func (s *Snapshot) GeneratedKey(table, column string) string {
	return s.keys[table][column]
}

// HasGeneratedKeys reports whether a column of the snapshot holds a
// generated key.
func (s *Snapshot) HasGeneratedKeys() bool { return len(s.keys) > 0 }

// foreignKey is one column of a foreign key: rel.col references
// refRel.refCol.
type foreignKey struct {
	nsp, rel, col          string
	refNsp, refRel, refCol string
}

// readForeignKeys reads every foreign key of the user's schemas, column by
// column.
func readForeignKeys(ctx context.Context, conn *pgxpool.Conn) ([]foreignKey, error) {
	rows, err := conn.Query(ctx, `SELECT n.nspname, c.relname, a.attname, rn.nspname, rc.relname, ra.attname
		FROM pg_constraint k
		JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_class rc ON rc.oid = k.confrelid JOIN pg_namespace rn ON rn.oid = rc.relnamespace
		CROSS JOIN LATERAL unnest(k.conkey, k.confkey) AS u(ck, fk)
		JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.ck
		JOIN pg_attribute ra ON ra.attrelid = k.confrelid AND ra.attnum = u.fk
		WHERE k.contype = 'f' AND `+userNamespaces+`
		ORDER BY 1, 2, 3, 4, 5, 6`)
	if err != nil {
		return nil, err
	}
	var out []foreignKey
	for rows.Next() {
		var f foreignKey
		if err := rows.Scan(&f.nsp, &f.rel, &f.col, &f.refNsp, &f.refRel, &f.refCol); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// serialColumn is a serial or identity column of the user's schemas.
type serialColumn struct{ nsp, rel, col string }

// readSerials reads every serial and identity column of the user's schemas.
func readSerials(ctx context.Context, conn *pgxpool.Conn) ([]serialColumn, error) {
	rows, err := conn.Query(ctx, `SELECT n.nspname, c.relname, a.attname
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p') AND `+userNamespaces+`
		AND (a.attidentity <> '' OR coalesce(pg_get_expr(d.adbin, d.adrelid) ~ '^nextval\(', false))
		ORDER BY 1, 2, 3`)
	if err != nil {
		return nil, err
	}
	var out []serialColumn
	for rows.Next() {
		var c serialColumn
		if err := rows.Scan(&c.nsp, &c.rel, &c.col); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// displayName is a table's name as Tables prints it.
func displayName(nsp, rel string) string {
	if nsp == "public" {
		return rel
	}
	return nsp + "." + rel
}

// generatedKeyColumns maps each table's key columns (display name -> column
// -> the key's "table.column"): the serial and identity columns of the
// catalog, and the columns referencing them, following chains of foreign
// keys.
func (cache *catalogCache) generatedKeyColumns() map[string]map[string]string {
	keys := map[string]map[string]string{}
	set := func(table, col, key string) bool {
		if keys[table] == nil {
			keys[table] = map[string]string{}
		}
		if keys[table][col] != "" {
			return false
		}
		keys[table][col] = key
		return true
	}
	for _, cc := range cache.serials {
		set(displayName(cc.nsp, cc.rel), cc.col, displayName(cc.nsp, cc.rel)+"."+cc.col)
	}
	for changed := true; changed; {
		changed = false
		for _, f := range cache.fks {
			key := keys[displayName(f.refNsp, f.refRel)][f.refCol]
			if key != "" && set(displayName(f.nsp, f.rel), f.col, key) {
				changed = true
			}
		}
	}
	return keys
}
