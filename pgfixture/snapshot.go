package pgfixture

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SnapshotOption changes what Snapshot reads or how it prints it.
type SnapshotOption interface{ apply(*snapOpts) }

type snapOpts struct {
	ignore        map[string]bool
	keepVolatile  bool
	normalize     map[string]func(string) string
	schemas       []string
	exclude       map[string]orList // table -> conditions of rows left out, any (snapshot_rows.go)
	tables        []string          // schema.table read whatever the schemas (snapshot_tables.go)
	excludeTables map[string]bool   // table or schema.table left out
	generatedKeys bool              // serial keys kept and marked (snapshot_keys.go)
}

type optFunc func(*snapOpts)

func (f optFunc) apply(o *snapOpts) { f(o) }

// IgnoreColumns leaves columns out of the snapshot. A column is named
// "table.column", "schema.table.column", or "column" (in every table).
func IgnoreColumns(cols ...string) SnapshotOption {
	return optFunc(func(o *snapOpts) {
		for _, c := range cols {
			o.ignore[c] = true
		}
	})
}

// KeepVolatile keeps the columns Snapshot leaves out by default: serial and
// identity columns, and columns whose default calls now(),
// current_timestamp, clock_timestamp(), gen_random_uuid(), random() or
// uuid_generate_*().
func KeepVolatile() SnapshotOption {
	return optFunc(func(o *snapOpts) { o.keepVolatile = true })
}

// Normalize rewrites the printed value of a column (named as for
// IgnoreColumns) before rows are compared; NULL is passed as "NULL".
func Normalize(col string, f func(string) string) SnapshotOption {
	return optFunc(func(o *snapOpts) { o.normalize[col] = f })
}

// Schemas sets the schemas read. By default (and with no names) Snapshot
// reads every schema but PostgreSQL's own (pg_catalog, information_schema,
// pg_toast*, pg_temp*). Outside public, a table an extension created is left
// out by default. The tables named by Tables are read too, whatever the
// schemas.
func Schemas(names ...string) SnapshotOption {
	return optFunc(func(o *snapOpts) { o.schemas = append([]string(nil), names...) })
}

// Snapshot is every row of every table of the checked schemas, compared as a
// multiset of rows per table.
type Snapshot struct {
	tables map[string][]Row
	types  map[string]map[string]string // table -> column -> type name
	keys   map[string]map[string]string // table -> column -> generated key (snapshot_keys.go)
}

// NewSnapshot makes a snapshot of the given rows (a copy of each table's
// list, sorted by the rows' printed form), for comparing rows rewritten
// from snapshots that Snapshot read. It has no column types.
func NewSnapshot(tables map[string][]Row) *Snapshot {
	s := &Snapshot{tables: make(map[string][]Row, len(tables))}
	for t, rows := range tables {
		rows = append([]Row(nil), rows...)
		sortRows(rows)
		s.tables[t] = rows
	}
	return s
}

// ColumnType returns the PostgreSQL type name of a column of a table (as
// named by Tables), such as "timestamptz", "uuid" or "text"; "" when the
// snapshot does not know it.
func (s *Snapshot) ColumnType(table, column string) string {
	return s.types[table][column]
}

// Row is one row as printed: NULL prints as NULL, text-like values quoted
// ('it”s'), booleans true/false, numeric exactly, jsonb canonically,
// timestamptz in RFC 3339 UTC, arrays as {...}.
type Row struct {
	Columns []string
	Values  []string
}

// String prints the row as (col=value, ...).
func (r Row) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, c := range r.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c)
		b.WriteByte('=')
		if i < len(r.Values) {
			b.WriteString(r.Values[i])
		}
	}
	b.WriteByte(')')
	return b.String()
}

// Tables returns the snapshot's table names, sorted; names are qualified
// with their schema only outside public.
func (s *Snapshot) Tables() []string {
	names := make([]string, 0, len(s.tables))
	for t := range s.tables {
		names = append(names, t)
	}
	sort.Strings(names)
	return names
}

// Rows returns the rows of a table (as named by Tables), sorted by their
// printed form.
func (s *Snapshot) Rows(table string) []Row {
	return append([]Row(nil), s.tables[table]...)
}

// String prints every table and its rows, sorted.
func (s *Snapshot) String() string {
	var b strings.Builder
	for _, t := range s.Tables() {
		fmt.Fprintf(&b, "%s:\n", t)
		for _, r := range s.tables[t] {
			fmt.Fprintf(&b, "  %s\n", r)
		}
	}
	return b.String()
}

type snapColumn struct {
	name      string
	expr      string // SQL expression printing the column as text
	kind      byte   // 's' quoted, 'b' bool, 'z' timestamptz, 't' timestamp, 'r' raw
	typeName  string // pg_type.typname
	normalize func(string) string
}

type snapTable struct {
	display string
	qname   string
	cols    []snapColumn
	where   string            // rows matching it are left out
	keys    map[string]string // column -> the generated key it holds (snapshot_keys.go)
}

const volatileDefault = `(nextval\(|now\(\)|current_timestamp|clock_timestamp|statement_timestamp|transaction_timestamp|localtimestamp|current_date|current_time|gen_random_uuid|uuid_generate_|random\()`

// catalogColumn is one column of a table of the checked schemas, as read
// from the catalog (a table without columns has one entry with col == "").
type catalogColumn struct {
	nsp, rel, col string
	typ           int64
	cat           string
	typeName      string
	volatile      bool
}

// catalogCache is the catalog read for one set of schemas, valid while the
// fingerprint stays the same.
type catalogCache struct {
	fingerprint string
	cols        []catalogColumn
	serials     []serialColumn               // snapshot_keys.go
	fks         []foreignKey                 // snapshot_keys.go
	keys        map[string]map[string]string // generatedKeyColumns
}

// Snapshot reads every row of every table of the checked schemas: one batch
// of SELECTs on the control pool (the catalog is read again only when the
// schema changed).
func (db *DB) Snapshot(ctx context.Context, opts ...SnapshotOption) (*Snapshot, error) {
	o := &snapOpts{ignore: map[string]bool{}, normalize: map[string]func(string) string{}}
	for _, opt := range opts {
		opt.apply(o)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil, errors.New("pgfixture: Snapshot of a closed DB")
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, db.srv.scrub.Error(fmt.Errorf("pgfixture: snapshot of %s: %w", db.name, err))
	}
	defer conn.Release()
	key := strings.Join(o.schemas, "\x00") + "\x01" + strings.Join(o.tables, "\x00")
	if o.schemas == nil {
		key = "\x02" + key // every schema
	}
	if db.catalogs == nil {
		db.catalogs = map[string]*catalogCache{}
	}
	for attempt := 0; ; attempt++ {
		cache := db.catalogs[key]
		if cache == nil {
			cache, err = readCatalog(ctx, conn, o.schemas, o.tables)
			if err != nil {
				return nil, db.srv.scrub.Error(fmt.Errorf("pgfixture: snapshot of %s: reading the catalog: %w", db.name, err))
			}
			db.catalogs[key] = cache
		}
		snap, fp, err := readRows(ctx, conn, snapTables(cache, o))
		if err == nil && fp == cache.fingerprint {
			return snap, nil
		}
		delete(db.catalogs, key) // the schema changed: read the catalog again
		if attempt > 0 || ctx.Err() != nil {
			if err == nil {
				err = errors.New("the schema keeps changing")
			}
			return nil, db.srv.scrub.Error(fmt.Errorf("pgfixture: snapshot of %s: %w", db.name, err))
		}
	}
}

func readCatalog(ctx context.Context, conn *pgxpool.Conn, schemas, tables []string) (*catalogCache, error) {
	all := schemas == nil // every schema but PostgreSQL's own
	if schemas == nil {
		schemas = []string{}
	}
	if tables == nil {
		tables = []string{}
	}
	cache := &catalogCache{}
	if err := conn.QueryRow(ctx, fingerprintSQL).Scan(&cache.fingerprint); err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, `SELECT n.nspname, c.relname, coalesce(a.attname::text, ''), coalesce(a.atttypid::int8, 0), coalesce(t.typcategory::text, ''), coalesce(t.typname::text, ''),
			coalesce(a.attidentity <> '' OR coalesce(pg_get_expr(d.adbin, d.adrelid) ~* $2, false), false)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		LEFT JOIN pg_type t ON t.oid = a.atttypid
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE (c.relkind = 'p' OR (c.relkind = 'r' AND NOT c.relispartition)) AND (n.nspname = ANY($1) OR n.nspname || '.' || c.relname = ANY($3)
			OR ($4 AND `+userNamespaces+` AND (n.nspname = 'public' OR NOT EXISTS (
				SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'))))
		ORDER BY n.nspname, c.relname, a.attnum`, schemas, volatileDefault, tables, all)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var c catalogColumn
		if err := rows.Scan(&c.nsp, &c.rel, &c.col, &c.typ, &c.cat, &c.typeName, &c.volatile); err != nil {
			rows.Close()
			return nil, err
		}
		cache.cols = append(cache.cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if cache.serials, err = readSerials(ctx, conn); err != nil {
		return nil, err
	}
	if cache.fks, err = readForeignKeys(ctx, conn); err != nil {
		return nil, err
	}
	cache.keys = cache.generatedKeyColumns()
	return cache, nil
}

// snapTables applies the options to the catalog.
func snapTables(cache *catalogCache, o *snapOpts) []*snapTable {
	var tables []*snapTable
	for _, cc := range cache.cols {
		display := cc.rel
		if cc.nsp != "public" {
			display = cc.nsp + "." + cc.rel
		}
		if o.excludedTable(cc.nsp, cc.rel) {
			continue
		}
		if len(tables) == 0 || tables[len(tables)-1].display != display {
			tables = append(tables, &snapTable{display: display, qname: pgx.Identifier{cc.nsp, cc.rel}.Sanitize(), where: o.excludeWhere(display)})
		}
		t := tables[len(tables)-1]
		if cc.col == "" {
			continue // a table without columns
		}
		keys := []string{cc.nsp + "." + cc.rel + "." + cc.col, cc.rel + "." + cc.col, cc.col}
		key := ""
		if o.generatedKeys {
			key = cache.keys[display][cc.col]
		}
		serial := key != "" && key == display+"."+cc.col
		if (cc.volatile && !o.keepVolatile && !serial) || anyKey(o.ignore, keys) {
			continue
		}
		if key != "" {
			if t.keys == nil {
				t.keys = map[string]string{}
			}
			t.keys[cc.col] = key
		}
		sc := snapColumn{name: cc.col, kind: 'r', typeName: cc.typeName}
		q := pgx.Identifier{cc.col}.Sanitize()
		sc.expr = "(" + q + ")::text"
		switch {
		case cc.typ == 114: // json: print canonically, as jsonb does
			sc.expr = "(" + q + ")::jsonb::text"
		case cc.typ == 16:
			sc.kind = 'b'
		case cc.typ == 1184:
			sc.kind = 'z'
		case cc.typ == 1114:
			sc.kind = 't'
		case cc.cat == "S" || cc.cat == "E":
			sc.kind = 's'
		}
		for _, k := range keys {
			if f, ok := o.normalize[k]; ok {
				sc.normalize = f
				break
			}
		}
		t.cols = append(t.cols, sc)
	}
	return tables
}

// readRows reads the tables and the catalog fingerprint in one batch.
func readRows(ctx context.Context, conn *pgxpool.Conn, tables []*snapTable) (*Snapshot, string, error) {
	batch := &pgx.Batch{}
	batch.Queue(fingerprintSQL)
	for _, t := range tables {
		exprs := make([]string, 0, len(t.cols)+1)
		for _, c := range t.cols {
			exprs = append(exprs, c.expr)
		}
		if len(exprs) == 0 {
			exprs = append(exprs, "NULL") // every column ignored: rows still count
		}
		q := "SELECT " + strings.Join(exprs, ", ") + " FROM " + t.qname
		if t.where != "" {
			q += " WHERE (" + t.where + ") IS NOT TRUE"
		}
		batch.Queue(q)
	}
	snap := &Snapshot{tables: make(map[string][]Row, len(tables)), types: make(map[string]map[string]string, len(tables))}
	br := conn.SendBatch(ctx, batch)
	defer br.Close()
	var fp string
	if err := br.QueryRow().Scan(&fp); err != nil {
		return nil, "", err
	}
	for _, t := range tables {
		rs, err := br.Query()
		if err != nil {
			return nil, fp, fmt.Errorf("reading %s: %w", t.display, err)
		}
		names := make([]string, len(t.cols))
		types := make(map[string]string, len(t.cols))
		for i, c := range t.cols {
			names[i] = c.name
			types[c.name] = c.typeName
		}
		snap.types[t.display] = types
		if t.keys != nil {
			if snap.keys == nil {
				snap.keys = map[string]map[string]string{}
			}
			snap.keys[t.display] = t.keys
		}
		var out []Row
		for rs.Next() {
			raw := rs.RawValues()
			r := Row{Columns: names, Values: make([]string, len(t.cols))}
			for i, c := range t.cols {
				r.Values[i] = c.print(raw[i])
			}
			out = append(out, r)
		}
		if err := rs.Err(); err != nil {
			return nil, fp, fmt.Errorf("reading %s: %w", t.display, err)
		}
		sortRows(out)
		snap.tables[t.display] = out
	}
	return snap, fp, br.Close()
}

func anyKey(m map[string]bool, keys []string) bool {
	for _, k := range keys {
		if m[k] {
			return true
		}
	}
	return false
}

func (c snapColumn) print(raw []byte) string {
	v := printValue(c.kind, raw)
	if c.normalize != nil {
		v = c.normalize(v)
	}
	return v
}

func printValue(kind byte, raw []byte) string {
	if raw == nil {
		return "NULL"
	}
	s := string(raw)
	switch kind {
	case 's':
		return quoteLiteral(s)
	case 'b':
		switch s {
		case "t":
			return "true"
		case "f":
			return "false"
		}
	case 'z':
		// The control pool's sessions use TimeZone UTC and ISO dates.
		for _, layout := range []string{"2006-01-02 15:04:05.999999999-07", "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999-07:00:00"} {
			if ts, err := time.Parse(layout, s); err == nil {
				return ts.UTC().Format(time.RFC3339Nano)
			}
		}
	case 't':
		if ts, err := time.Parse("2006-01-02 15:04:05.999999999", s); err == nil {
			return ts.Format("2006-01-02T15:04:05.999999999")
		}
	}
	return s
}

func sortRows(rows []Row) {
	keys := make([]string, len(rows))
	idx := make([]int, len(rows))
	for i, r := range rows {
		keys[i] = r.String()
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	sorted := make([]Row, len(rows))
	for i, j := range idx {
		sorted[i] = rows[j]
	}
	copy(rows, sorted)
}
