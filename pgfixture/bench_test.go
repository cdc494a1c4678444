package pgfixture

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// benchSchema has 10 tables (serials, a now() default, foreign keys) and a
// migration that fills a lookup table.
var benchSchema = func() Schema {
	var b strings.Builder
	b.WriteString("CREATE TABLE t0 (id serial PRIMARY KEY, code text UNIQUE NOT NULL, created_at timestamptz DEFAULT now());\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "CREATE TABLE t%d (id bigserial PRIMARY KEY, parent_id int REFERENCES t0, amount numeric(12,2), note text, meta jsonb);\n", i)
	}
	return SQL(b.String(), "INSERT INTO t0 (code) VALUES ('a'), ('b'), ('c');")
}()

// dirty inserts 20 rows across the tables, as a scenario would.
const dirty = `INSERT INTO t1 (parent_id, amount, note) SELECT 1, g, 'n' FROM generate_series(1, 4) g;
INSERT INTO t2 (parent_id, amount) SELECT 2, g FROM generate_series(1, 4) g;
INSERT INTO t3 (parent_id, meta) SELECT 3, '{"k": 1}' FROM generate_series(1, 4) g;
INSERT INTO t4 (amount) SELECT g FROM generate_series(1, 4) g;
INSERT INTO t0 (code) SELECT 'x' || g FROM generate_series(1, 4) g;`

func benchDB(b *testing.B) (*Server, *DB) {
	b.Helper()
	ctx := context.Background()
	srv, err := Shared(ctx)
	if err != nil {
		b.Fatal(err)
	}
	db, err := srv.CreateDB(ctx, benchSchema)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close(context.Background(), false) })
	return srv, db
}

func BenchmarkReset(b *testing.B) {
	ctx := context.Background()
	_, db := benchDB(b)
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		if _, err := db.Pool().Exec(ctx, dirty); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := db.Reset(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResetSnapshot(b *testing.B) {
	ctx := context.Background()
	_, db := benchDB(b)
	want, err := db.Snapshot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		if _, err := db.Pool().Exec(ctx, dirty); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := db.Reset(ctx); err != nil {
			b.Fatal(err)
		}
		got, err := db.Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if d := Diff(want, got); d != nil {
			b.Fatal(FormatDiff(d))
		}
	}
}

// BenchmarkTemplateClone is what a fresh database per scenario would cost:
// CreateDB from the (already built) template, ready to use. Every database
// is dropped, not kept warm, so each CreateDB really clones.
func BenchmarkTemplateClone(b *testing.B) {
	ctx := context.Background()
	srv, db := benchDB(b) // builds the template
	if err := db.shut(ctx, false); err != nil {
		b.Fatal(err)
	}
	// Drop the warm databases earlier benchmarks left, or CreateDB takes them.
	for warm := srv.takeIdle(benchSchema.Hash()); warm != nil; warm = srv.takeIdle(benchSchema.Hash()) {
		if err := warm.shut(ctx, false); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		db, err := srv.CreateDB(ctx, benchSchema)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := db.shut(ctx, false); err != nil { // dropped, not recycled
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkConnect measures a new connection to a fixture database, login
// included: what a check pays for every session it opens, and fresh
// sessions open them for every scenario. TWICE_POSTGRES picks the mode
// (container mode logs in with md5; a SCRAM server is a TWICE_DATABASE_URL).
func BenchmarkConnect(b *testing.B) {
	ctx := context.Background()
	_, db := benchDB(b)
	cfg := db.ConnConfig()
	for b.Loop() {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := conn.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
