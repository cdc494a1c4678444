package pgfixture

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// userNamespaces selects the schemas pgfixture resets: every schema but the
// system ones.
const userNamespaces = `n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'`

// fingerprintSQL digests the parts of the catalog that a Reset cannot undo
// (tables, columns, constraints, defaults, triggers, indexes, sequences,
// enum values): when it changes, the schema was changed and Reset re-clones.
// It is kept cheap (index lookups and small catalogs) because every Reset
// and Snapshot runs it.
const fingerprintSQL = `WITH ns AS (SELECT oid FROM pg_namespace n WHERE ` + userNamespaces + `),
	rel AS (SELECT c.oid, c.relkind, c.relname, c.relnamespace FROM pg_class c WHERE c.relnamespace IN (SELECT oid FROM ns))
SELECT md5(coalesce(string_agg(x, ',' ORDER BY x), '')) FROM (
	SELECT 'n' || oid AS x FROM ns
	UNION ALL SELECT 'c' || oid || relkind::text || relname || relnamespace FROM rel
	UNION ALL SELECT 'a' || a.attrelid || '.' || a.attnum || a.attname || a.atttypid || '.' || a.atttypmod || a.attnotnull || a.attisdropped || a.atthasdef || a.attidentity::text || a.attgenerated::text || a.xmin
		FROM rel JOIN pg_attribute a ON a.attrelid = rel.oid WHERE a.attnum > 0 AND rel.relkind IN ('r', 'p', 'v', 'm', 'f')
	UNION ALL SELECT 'k' || o.oid || o.xmin FROM pg_constraint o WHERE o.connamespace IN (SELECT oid FROM ns)
	UNION ALL SELECT 'd' || d.oid || d.xmin FROM pg_attrdef d JOIN rel ON rel.oid = d.adrelid
	UNION ALL SELECT 't' || g.oid || g.xmin || g.tgenabled::text FROM pg_trigger g JOIN rel ON rel.oid = g.tgrelid
	UNION ALL SELECT 'e' || e.oid FROM pg_enum e
) s`

// resetPlan is what Reset replays: captured right after the clone, when the
// database is in the migrated state.
type resetPlan struct {
	fingerprint string
	stmts       []string // one transaction: deletes, restores, setval
}

type planTable struct {
	oid     uint32
	qname   string // quoted, schema-qualified
	cols    []string
	types   []string
	parents []uint32 // tables this one references (foreign keys)
}

// capturePlan reads the table list, foreign keys, migrated rows and
// sequence states of a freshly cloned database.
func capturePlan(ctx context.Context, pool *pgxpool.Pool) (*resetPlan, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()

	plan := &resetPlan{}
	if err := conn.QueryRow(ctx, fingerprintSQL).Scan(&plan.fingerprint); err != nil {
		return nil, fmt.Errorf("reading the catalog fingerprint: %w", err)
	}
	// session_replication_role = replica silences user triggers during the
	// restore, but changing it drops every cached plan of the session, which
	// costs more than the reset itself: use it only where user triggers exist.
	var replica bool
	if err := conn.QueryRow(ctx, `SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AND EXISTS (
			SELECT FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE NOT g.tgisinternal AND `+userNamespaces+`)`).Scan(&replica); err != nil {
		return nil, err
	}

	// Tables and their insertable columns.
	rows, err := conn.Query(ctx, `SELECT c.oid, quote_ident(n.nspname) || '.' || quote_ident(c.relname),
			coalesce(array_agg(quote_ident(a.attname) ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
			coalesce(array_agg(format_type(a.atttypid, a.atttypmod) ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
		WHERE c.relkind = 'r' AND `+userNamespaces+`
		AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
		GROUP BY c.oid, n.nspname, c.relname ORDER BY n.nspname, c.relname`)
	if err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}
	var tables []*planTable
	byOID := map[uint32]*planTable{}
	for rows.Next() {
		t := &planTable{}
		if err := rows.Scan(&t.oid, &t.qname, &t.cols, &t.types); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, t)
		byOID[t.oid] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}

	// Foreign keys, child -> parent.
	rows, err = conn.Query(ctx, `SELECT conrelid::oid, confrelid::oid FROM pg_constraint WHERE contype = 'f'`)
	if err != nil {
		return nil, fmt.Errorf("listing foreign keys: %w", err)
	}
	for rows.Next() {
		var child, parent uint32
		if err := rows.Scan(&child, &parent); err != nil {
			rows.Close()
			return nil, err
		}
		if t := byOID[child]; t != nil && byOID[parent] != nil && child != parent {
			t.parents = append(t.parents, parent)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing foreign keys: %w", err)
	}

	// Migrated rows, as text, in one batch.
	batch := &pgx.Batch{}
	for _, t := range tables {
		if len(t.cols) == 0 {
			batch.Queue("SELECT 1 WHERE false")
			continue
		}
		exprs := make([]string, len(t.cols))
		for i, c := range t.cols {
			exprs[i] = "(" + c + ")::text"
		}
		batch.Queue("SELECT " + strings.Join(exprs, ", ") + " FROM " + t.qname)
	}
	restores := map[uint32]string{}
	br := conn.SendBatch(ctx, batch)
	for _, t := range tables {
		rs, err := br.Query()
		if err != nil {
			br.Close()
			return nil, fmt.Errorf("reading the migrated rows of %s: %w", t.qname, err)
		}
		var values []string
		for rs.Next() {
			raw := rs.RawValues()
			lits := make([]string, len(raw))
			for i, v := range raw {
				if v == nil {
					lits[i] = "NULL"
				} else {
					lits[i] = quoteLiteral(string(v)) + "::" + t.types[i]
				}
			}
			values = append(values, "("+strings.Join(lits, ", ")+")")
		}
		if err := rs.Err(); err != nil {
			br.Close()
			return nil, fmt.Errorf("reading the migrated rows of %s: %w", t.qname, err)
		}
		if len(values) > 0 {
			restores[t.oid] = ("INSERT INTO " + t.qname + " (" + strings.Join(t.cols, ", ") + ") OVERRIDING SYSTEM VALUE VALUES " + strings.Join(values, ", "))
		}
	}
	if err := br.Close(); err != nil {
		return nil, err
	}

	// Sequence states.
	rows, err = conn.Query(ctx, `SELECT c.oid, quote_ident(n.nspname) || '.' || quote_ident(c.relname)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'S' AND `+userNamespaces+` ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("listing sequences: %w", err)
	}
	type seq struct {
		oid   uint32
		qname string
	}
	var seqs []seq
	for rows.Next() {
		var s seq
		if err := rows.Scan(&s.oid, &s.qname); err != nil {
			rows.Close()
			return nil, err
		}
		seqs = append(seqs, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing sequences: %w", err)
	}
	var setvals []string
	if len(seqs) > 0 {
		batch := &pgx.Batch{}
		for _, s := range seqs {
			batch.Queue("SELECT last_value::text, is_called FROM " + s.qname)
		}
		br := conn.SendBatch(ctx, batch)
		for _, s := range seqs {
			var last string
			var called bool
			if err := br.QueryRow().Scan(&last, &called); err != nil {
				br.Close()
				return nil, fmt.Errorf("reading sequence %s: %w", s.qname, err)
			}
			setvals = append(setvals, fmt.Sprintf("setval(%d::oid, %s, %t)", s.oid, last, called))
		}
		if err := br.Close(); err != nil {
			return nil, err
		}
	}

	// The transaction Reset runs.
	plan.stmts = append(plan.stmts, "BEGIN", "SET LOCAL lock_timeout = '3s'")
	if replica {
		// Triggers (user and foreign-key ones) stay quiet: the restored rows
		// are exactly the migrated ones, in any order.
		plan.stmts = append(plan.stmts, "SET LOCAL session_replication_role = replica")
		for _, t := range tables {
			plan.stmts = append(plan.stmts, "DELETE FROM "+t.qname)
		}
		for _, t := range tables {
			if r, ok := restores[t.oid]; ok {
				plan.stmts = append(plan.stmts, r)
			}
		}
	} else {
		order, cyclic := deleteOrder(tables)
		if len(cyclic) > 0 {
			names := make([]string, len(cyclic))
			for i, t := range cyclic {
				names[i] = t.qname
			}
			plan.stmts = append(plan.stmts, "TRUNCATE "+strings.Join(names, ", ")+" CASCADE")
		}
		for _, t := range order {
			plan.stmts = append(plan.stmts, "DELETE FROM "+t.qname)
		}
		// Parents before children for the restores (cycles: foreign keys
		// are checked per statement, so such rows may not restore; Reset then
		// falls back to a clone).
		for _, t := range cyclic {
			if r, ok := restores[t.oid]; ok {
				plan.stmts = append(plan.stmts, r)
			}
		}
		for i := len(order) - 1; i >= 0; i-- {
			if r, ok := restores[order[i].oid]; ok {
				plan.stmts = append(plan.stmts, r)
			}
		}
	}
	if len(setvals) > 0 {
		plan.stmts = append(plan.stmts, "SELECT "+strings.Join(setvals, ", "))
	}
	plan.stmts = append(plan.stmts, "COMMIT")
	return plan, nil
}

// deleteOrder sorts tables children first. Tables on a foreign-key cycle
// (and so not sortable) are returned apart, for a TRUNCATE ... CASCADE.
func deleteOrder(tables []*planTable) (order, cyclic []*planTable) {
	// Kahn's algorithm on child -> parent edges: a table can be deleted
	// from once no remaining table references it.
	refs := map[uint32]int{} // how many remaining children reference a table
	for _, t := range tables {
		for _, p := range t.parents {
			refs[p]++
		}
	}
	done := map[uint32]bool{}
	for progress := true; progress; {
		progress = false
		for _, t := range tables {
			if done[t.oid] || refs[t.oid] > 0 {
				continue
			}
			done[t.oid] = true
			order = append(order, t)
			for _, p := range t.parents {
				refs[p]--
			}
			progress = true
		}
	}
	for _, t := range tables {
		if !done[t.oid] {
			cyclic = append(cyclic, t)
		}
	}
	return order, cyclic
}

// Reset brings the database back to exactly its migrated state (or, after
// Checkpoint or UseCheckpoint, to the checkpoint's state), rows and sequence
// values alike, in one transaction sent as one batch on the control pool: no
// new database, no new connection. Only when the schema itself was changed
// (or the reset cannot run, e.g. another session holds locks) does it fall
// back to dropping and re-cloning the database under the same name; a
// checkpoint is then restored on the new clone.
func (db *DB) Reset(ctx context.Context) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return errors.New("pgfixture: Reset of a closed DB")
	}
	return db.reset(ctx)
}

// reset is Reset; db.mu is held.
func (db *DB) reset(ctx context.Context) error {
	plan := db.plan
	if db.base != nil {
		plan = db.base
	}
	if db.replay(ctx, plan) == nil {
		return nil
	}
	if ctx.Err() != nil {
		return db.srv.scrub.Error(fmt.Errorf("pgfixture: reset of %s: %w", db.name, ctx.Err()))
	}
	if err := db.reclone(ctx); err != nil {
		return err
	}
	if db.base == nil {
		return nil
	}
	if err := db.replay(ctx, db.base); err != nil {
		return db.srv.scrub.Error(fmt.Errorf("pgfixture: reset of %s: restoring the checkpoint on the database cloned again: %w", db.name, err))
	}
	return nil
}

// errSchemaChanged: after the restore the catalog fingerprint is not the
// plan's.
var errSchemaChanged = errors.New("the schema is not the one the checkpoint was taken on")

// replay runs plan's transaction and checks the catalog fingerprint after it.
func (db *DB) replay(ctx context.Context, plan *resetPlan) error {
	batch := &pgx.Batch{}
	for _, s := range plan.stmts {
		batch.Queue(s)
	}
	batch.Queue(fingerprintSQL)
	br := db.pool.SendBatch(ctx, batch)
	var err error
	for range plan.stmts {
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	var fp string
	if err == nil {
		err = br.QueryRow().Scan(&fp)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && fp != plan.fingerprint {
		err = errSchemaChanged
	}
	return err
}

// reclone drops the database and clones it again; db.mu is held.
func (db *DB) reclone(ctx context.Context) error {
	if db.pool != nil {
		db.pool.Close()
		db.pool = nil
	}
	if err := db.srv.dropDatabase(ctx, db.name); err != nil {
		return err
	}
	return db.clone(ctx)
}
