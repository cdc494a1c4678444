package pgfixture

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DB is one fixture database: a clone of its schema's template, with a small
// control pool used for Reset and Snapshot.
type DB struct {
	srv    *Server
	schema Schema
	name   string
	cfg    *pgx.ConnConfig // for callers: the server's settings with Database = name

	mu       sync.Mutex
	pool     *pgxpool.Pool
	plan     *resetPlan
	catalogs map[string]*catalogCache // Snapshot's catalog per schema list
	closed   bool
}

// CreateDB returns a new database in the migrated state of schema: a clone
// of the schema's template, which is built once per schema hash (guarded by
// an advisory lock, so parallel test binaries sharing the server agree).
// A broken migration fails with its name, PostgreSQL's message and the line
// and column PostgreSQL points at.
func (s *Server) CreateDB(ctx context.Context, schema Schema) (*DB, error) {
	if s.isClosed() {
		return nil, errors.New("pgfixture: CreateDB on a closed server")
	}
	if schema.err != nil {
		return nil, schema.err
	}
	if db := s.takeIdle(schema.Hash()); db != nil {
		return db, nil
	}
	cfg := s.adminCfg.Copy()
	cfg.Database = fmt.Sprintf("%sf%d_%s", dbPrefix, s.seq.Add(1), randHex(4))
	db := &DB{srv: s, schema: schema, name: cfg.Database, cfg: cfg}
	if err := db.clone(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.dbs[db] = struct{}{}
	}
	s.mu.Unlock()
	if closed {
		_ = db.Close(context.Background(), false)
		return nil, errors.New("pgfixture: the server was closed during CreateDB")
	}
	return db, nil
}

// clone (re)creates the database from its template and opens the control
// pool; db.mu is held or db is not shared yet.
func (db *DB) clone(ctx context.Context) error {
	if err := db.srv.cloneTemplate(ctx, db.schema, db.name); err != nil {
		return err
	}
	db.catalogs = nil
	pool, err := db.openPool(ctx)
	if err == nil {
		db.pool = pool
		db.plan, err = capturePlan(ctx, pool)
	}
	if err != nil {
		if db.pool != nil {
			db.pool.Close()
			db.pool = nil
		}
		_ = db.srv.dropDatabase(context.Background(), db.name)
		return db.srv.scrub.Error(fmt.Errorf("pgfixture: preparing %s: %w", db.name, err))
	}
	return nil
}

func (db *DB) openPool(ctx context.Context) (*pgxpool.Pool, error) {
	pcfg, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, err
	}
	cc := db.cfg.Copy()
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	cc.RuntimeParams["timezone"] = "UTC"
	cc.RuntimeParams["datestyle"] = "ISO, YMD"
	cc.RuntimeParams["intervalstyle"] = "postgres"
	cc.RuntimeParams["application_name"] = "pgfixture"
	pcfg.ConnConfig = cc
	pcfg.MaxConns = 4
	pcfg.MaxConnIdleTime = time.Hour
	pcfg.MaxConnLifetime = 24 * time.Hour
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Name returns the database's name.
func (db *DB) Name() string { return db.name }

// URL returns a postgres:// URL of the database with the password masked.
func (db *DB) URL() string { return configURL(db.cfg) }

// ConnConfig returns a fresh copy of the connection settings of the
// database (password included), for callers that build their own pools or
// add tracers.
func (db *DB) ConnConfig() *pgx.ConnConfig { return db.cfg.Copy() }

// Pool returns the fixture's own small control pool (no tracer; sessions
// use TimeZone UTC). After a Reset that had to re-clone (the schema was
// changed), it is a new pool.
func (db *DB) Pool() *pgxpool.Pool {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.pool
}

// Close releases the database: it stays when keep is true or
// TWICE_KEEP_DB=1 (marked as kept, so stale cleanup leaves it alone);
// otherwise it is reset and kept warm for the next CreateDB of the same
// schema (a clone costs hundreds of milliseconds, a reset a few), or dropped
// when enough are warm already or the reset fails. Close is idempotent, and
// db must not be used after it.
func (db *DB) Close(ctx context.Context, keep bool) error {
	if !keep && os.Getenv(envKeepDB) != "1" && db.srv.recycle(ctx, db) {
		return nil
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	defer db.srv.forget(db)
	if db.pool != nil {
		db.pool.Close()
		db.pool = nil
	}
	if keep || os.Getenv(envKeepDB) == "1" {
		_, err := db.srv.admin.Exec(ctx, fmt.Sprintf("COMMENT ON DATABASE %s IS %s",
			pgx.Identifier{db.name}.Sanitize(), quoteLiteral(self.String()+" kept")))
		return db.srv.scrub.Error(err)
	}
	return db.srv.dropDatabase(ctx, db.name)
}

// TB is what New needs; *testing.T, *testing.B and *rapid.T satisfy it.
type TB interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
	Failed() bool
}

// New is the test helper: a new database of schema on the Shared server,
// dropped when the test ends, or kept when the test failed (its masked URL
// is logged as "pgfixture: kept database <URL>"). Any error is fatal.
func New(tb TB, schema Schema) *DB {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	srv, err := Shared(ctx)
	if err != nil {
		tb.Fatalf("%v", err)
		return nil
	}
	db, err := srv.CreateDB(ctx, schema)
	if err != nil {
		tb.Fatalf("%v\n(fix the migration, or check the server at %s)", err, srv.URL())
		return nil
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		keep := tb.Failed() || os.Getenv(envKeepDB) == "1"
		if keep {
			note := ""
			if srv.Mode() == "local" {
				note = " (the local cluster is removed when the test binary ends; set TWICE_DATABASE_URL to keep databases for inspection)"
			}
			tb.Logf("pgfixture: kept database %s%s", db.URL(), note)
		}
		if err := db.Close(ctx, keep); err != nil {
			tb.Logf("pgfixture: closing %s: %v", db.Name(), err)
		}
	})
	return db
}

// maxIdlePerSchema bounds the warm databases kept per schema.
const maxIdlePerSchema = 4

// recycle resets db and hands its database to a fresh *DB on the idle list,
// closing db itself. It reports false when db must be closed the usual way.
func (s *Server) recycle(ctx context.Context, db *DB) bool {
	hash := db.schema.Hash()
	s.mu.Lock()
	full := s.closed || len(s.idle[hash]) >= maxIdlePerSchema
	s.mu.Unlock()
	if full || db.Reset(ctx) != nil {
		return false
	}
	db.mu.Lock()
	if db.closed || db.pool == nil {
		db.mu.Unlock()
		return false
	}
	warm := &DB{srv: s, schema: db.schema, name: db.name, cfg: db.cfg, pool: db.pool, plan: db.plan, catalogs: db.catalogs}
	db.closed = true
	db.pool = nil
	db.mu.Unlock()

	s.mu.Lock()
	delete(s.dbs, db)
	s.dbs[warm] = struct{}{}
	if s.closed {
		s.mu.Unlock()
		_ = warm.Close(ctx, false) // the server closed meanwhile: drop it
		return true
	}
	if s.idle == nil {
		s.idle = map[string][]*DB{}
	}
	s.idle[hash] = append(s.idle[hash], warm)
	s.mu.Unlock()
	return true
}

// takeIdle returns a warm database of the schema, or nil.
func (s *Server) takeIdle(hash string) *DB {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.idle[hash]
	if s.closed || len(list) == 0 {
		return nil
	}
	db := list[len(list)-1]
	s.idle[hash] = list[:len(list)-1]
	return db
}
