package pgfixture

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// SnapshotOption changes what Snapshot reads or how it prints it.
type SnapshotOption interface{ apply(*snapOpts) }

type snapOpts struct {
	ignore       map[string]bool
	keepVolatile bool
	normalize    map[string]func(string) string
	schemas      []string
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

// Schemas sets the schemas read (default "public").
func Schemas(names ...string) SnapshotOption {
	return optFunc(func(o *snapOpts) { o.schemas = append([]string(nil), names...) })
}

// Snapshot is every row of every table of the checked schemas, compared as a
// multiset of rows per table.
type Snapshot struct {
	tables map[string][]Row
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
	normalize func(string) string
}

type snapTable struct {
	display string
	qname   string
	cols    []snapColumn
}

const volatileDefault = `(nextval\(|now\(\)|current_timestamp|clock_timestamp|statement_timestamp|transaction_timestamp|localtimestamp|current_date|current_time|gen_random_uuid|uuid_generate_|random\()`

// Snapshot reads every row of every table of the checked schemas (one batch
// of SELECTs on the control pool).
func (db *DB) Snapshot(ctx context.Context, opts ...SnapshotOption) (*Snapshot, error) {
	o := &snapOpts{ignore: map[string]bool{}, normalize: map[string]func(string) string{}, schemas: []string{"public"}}
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

	rows, err := conn.Query(ctx, `SELECT n.nspname, c.relname, a.attname, a.atttypid::int8, t.typcategory::text,
			a.attidentity <> '' OR coalesce(pg_get_expr(d.adbin, d.adrelid) ~* $2, false)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		LEFT JOIN pg_type t ON t.oid = a.atttypid
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE (c.relkind = 'p' OR (c.relkind = 'r' AND NOT c.relispartition)) AND n.nspname = ANY($1)
		ORDER BY n.nspname, c.relname, a.attnum`, o.schemas, volatileDefault)
	if err != nil {
		return nil, db.srv.scrub.Error(fmt.Errorf("pgfixture: snapshot of %s: reading the catalog: %w", db.name, err))
	}
	var tables []*snapTable
	for rows.Next() {
		var nsp, rel string
		var col *string
		var typ *int64
		var cat *string
		var volatile *bool
		if err := rows.Scan(&nsp, &rel, &col, &typ, &cat, &volatile); err != nil {
			rows.Close()
			return nil, err
		}
		display := rel
		if nsp != "public" {
			display = nsp + "." + rel
		}
		if len(tables) == 0 || tables[len(tables)-1].display != display {
			tables = append(tables, &snapTable{display: display, qname: pgx.Identifier{nsp, rel}.Sanitize()})
		}
		t := tables[len(tables)-1]
		if col == nil {
			continue // a table without columns
		}
		keys := []string{nsp + "." + rel + "." + *col, rel + "." + *col, *col}
		if (*volatile && !o.keepVolatile) || anyKey(o.ignore, keys) {
			continue
		}
		sc := snapColumn{name: *col, kind: 'r'}
		q := pgx.Identifier{*col}.Sanitize()
		sc.expr = "(" + q + ")::text"
		switch {
		case *typ == 114: // json: print canonically, as jsonb does
			sc.expr = "(" + q + ")::jsonb::text"
		case *typ == 16:
			sc.kind = 'b'
		case *typ == 1184:
			sc.kind = 'z'
		case *typ == 1114:
			sc.kind = 't'
		case *cat == "S" || *cat == "E":
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
	if err := rows.Err(); err != nil {
		return nil, db.srv.scrub.Error(fmt.Errorf("pgfixture: snapshot of %s: reading the catalog: %w", db.name, err))
	}

	batch := &pgx.Batch{}
	for _, t := range tables {
		exprs := make([]string, 0, len(t.cols)+1)
		for _, c := range t.cols {
			exprs = append(exprs, c.expr)
		}
		if len(exprs) == 0 {
			exprs = append(exprs, "NULL") // every column ignored: rows still count
		}
		batch.Queue("SELECT " + strings.Join(exprs, ", ") + " FROM " + t.qname)
	}
	snap := &Snapshot{tables: make(map[string][]Row, len(tables))}
	br := conn.SendBatch(ctx, batch)
	for _, t := range tables {
		rs, err := br.Query()
		if err != nil {
			br.Close()
			return nil, db.srv.scrub.Error(fmt.Errorf("pgfixture: snapshot of %s: reading %s: %w", db.name, t.display, err))
		}
		names := make([]string, len(t.cols))
		for i, c := range t.cols {
			names[i] = c.name
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
			br.Close()
			return nil, db.srv.scrub.Error(fmt.Errorf("pgfixture: snapshot of %s: reading %s: %w", db.name, t.display, err))
		}
		sortRows(out)
		snap.tables[t.display] = out
	}
	if err := br.Close(); err != nil {
		return nil, db.srv.scrub.Error(fmt.Errorf("pgfixture: snapshot of %s: %w", db.name, err))
	}
	return snap, nil
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
