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

	"github.com/twicekit/twicekit/internal/pgserver"
)

// DB is one fixture database: a clone of its schema's template, with a small
// control pool used for Reset and Snapshot.
type DB struct {
	srv    *Server
	schema Schema
	name   string
	cfg    *pgx.ConnConfig // for callers: the server's settings with Database = name
	slots  *slots          // the server's connections reserved for the control pool

	mu       sync.Mutex
	pool     *pgxpool.Pool
	plan     *resetPlan               // the migrated state, captured by clone
	base     *resetPlan               // the checkpoint Reset restores instead (checkpoint.go)
	catalogs map[string]*catalogCache // Snapshot's catalog per schema list
	closed   bool
	label    string // what the database is for (a test's name), see Label
	// dropFailed: closed, but its DROP failed; it stays in the server's
	// list so that Server.Close tries again and reports it.
	dropFailed bool
}

// CreateDB returns a new database in the migrated state of schema: a clone
// of the schema's template, which is built once per schema hash (guarded by
// an advisory lock, so parallel test binaries sharing the server agree).
// A broken migration fails with its name, PostgreSQL's message and the line
// and column PostgreSQL points at.
//
// The database holds 4 of the server's connections for its control pool
// while it lives (see [Server.ReserveConnections]); when they are not free,
// CreateDB waits for them. A warm database of the schema (a closed one kept
// for reuse) is handed out without waiting.
func (s *Server) CreateDB(ctx context.Context, schema Schema) (*DB, error) {
	db, _, err := s.createDB(ctx, schema, 0, "", true)
	return db, err
}

// CreateDBReserving is CreateDB for a caller that will open up to extra
// connections of its own to the database (workers, pools): it reserves them
// together with the database's control pool, in one step, and returns the
// function that gives them back once the caller's connections are closed
// (the database keeps its own until it is closed). Reserving both at once
// means a caller never holds connections while it waits for more, so
// parallel callers cannot wait for each other. When the reservation is more
// than the server has room for at all, it fails at once with an error that
// names the numbers and the fix (errors.Is(err, ErrConnectionLimit)); what
// names the caller in it, e.g. `twice.Check of job "reward"`.
func (s *Server) CreateDBReserving(ctx context.Context, schema Schema, extra int, what string) (db *DB, release func(), err error) {
	db, r, err := s.createDB(ctx, schema, max(extra, 0), what, true)
	if err != nil {
		return nil, nil, err
	}
	return db, r.release, nil
}

// TryCreateDBReserving is CreateDBReserving that never waits for the
// room: when the connections are not free now, it returns ok false and
// holds nothing. A caller that already holds a reservation uses it to ask
// for more, which waiting could deadlock.
func (s *Server) TryCreateDBReserving(ctx context.Context, schema Schema, extra int, what string) (db *DB, release func(), ok bool, err error) {
	db, r, err := s.createDB(ctx, schema, max(extra, 0), what, false)
	if errors.Is(err, errNoRoomNow) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	return db, r.release, true, nil
}

// ConnectionRoom is how many connections the server has room for, for
// fixture databases and their callers, as last measured.
func (s *Server) ConnectionRoom() int { return s.room.capacity() }

// errNoRoomNow is a reservation that did not wait and found no room.
var errNoRoomNow = errors.New("pgfixture: no free connections now")

// createDB returns a database of schema and a reservation of extra more
// connections for the caller (nil when extra is 0). Unless wait, it
// returns errNoRoomNow instead of waiting for the connections.
func (s *Server) createDB(ctx context.Context, schema Schema, extra int, what string, wait bool) (*DB, *slots, error) {
	if s.isClosed() {
		return nil, nil, errors.New("pgfixture: CreateDB on a closed server")
	}
	if schema.err != nil {
		return nil, nil, schema.err
	}
	hash := schema.Hash()
	if db := s.takeIdle(hash); db != nil {
		if extra == 0 {
			return db, nil, nil
		}
		if s.room.tryAcquire(extra) {
			return db, &slots{b: s.room, n: extra}, nil
		}
		// Waiting for extra while holding the warm database's connections
		// could wait on another caller doing the same: hand it back (the
		// wait below drops it if its connections are needed) and wait for
		// all at once.
		s.putIdle(ctx, db)
	}
	if what == "" {
		what = "a fixture database"
	}
	detail := ""
	if extra > 0 {
		detail = fmt.Sprintf("%d of its own and %d for its fixture database's control pool", extra, controlPoolConns)
	}
	var all *slots
	if wait {
		var err error
		if all, err = s.reserve(ctx, extra+controlPoolConns, what, detail); err != nil {
			return nil, nil, err
		}
	} else {
		if !s.room.tryAcquire(extra + controlPoolConns) {
			return nil, nil, errNoRoomNow
		}
		all = &slots{b: s.room, n: extra + controlPoolConns}
	}
	var mine *slots
	if extra > 0 {
		mine = &slots{b: s.room, n: extra}
	}
	own := &slots{b: s.room, n: controlPoolConns}
	if db := s.takeIdle(hash); db != nil { // handed back while this call waited
		own.release()
		return db, mine, nil
	}
	cfg := s.databaseConfig(fmt.Sprintf("%sf%d_%s", dbPrefix, s.seq.Add(1), randHex(4)))
	db := &DB{srv: s, schema: schema, name: cfg.Database, cfg: cfg, slots: own}
	if err := db.clone(ctx); err != nil {
		all.release()
		return nil, nil, err
	}
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.dbs[db] = struct{}{}
	}
	s.mu.Unlock()
	if closed {
		_ = db.Close(context.Background(), false)
		mine.release()
		return nil, nil, errors.New("pgfixture: the server was closed during CreateDB")
	}
	return db, mine, nil
}

// clone (re)creates the database from its template and opens the control
// pool; db.mu is held or db is not shared yet.
func (db *DB) clone(ctx context.Context) error {
	if err := db.srv.cloneTemplate(ctx, db.schema, db.name); err != nil {
		return db.srv.explainRefused(err)
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
		return db.srv.scrub.Error(db.srv.explainRefused(fmt.Errorf("pgfixture: preparing %s: %w", db.name, err)))
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
	pcfg.MaxConns = controlPoolConns
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
// add tracers. Its ConnString names this database.
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
// when enough are warm already, someone waits for connections, or the reset
// fails. Close is idempotent, and db must not be used after it.
func (db *DB) Close(ctx context.Context, keep bool) error {
	if !keep && os.Getenv(envKeepDB) != "1" {
		db.Label("") // the next user of a recycled database labels it anew
		if db.srv.recycle(ctx, db) {
			return nil
		}
	}
	return db.shut(ctx, keep)
}

// shut closes the control pool, gives its connections back and keeps or
// drops the database. A database whose DROP fails stays known to the
// server, so that Server.Close drops it or says it could not.
func (db *DB) shut(ctx context.Context, keep bool) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed && !db.dropFailed {
		return nil
	}
	if !db.closed {
		db.closed = true
		if db.pool != nil {
			db.pool.Close()
			db.pool = nil
		}
		db.slots.release()
		if keep || os.Getenv(envKeepDB) == "1" {
			defer db.srv.forget(db)
			if err := db.srv.dropKeptUnder(ctx, db.srv.admin, db.label, db.name); err != nil {
				return db.srv.scrub.Error(err)
			}
			_, err := db.srv.admin.Exec(ctx, fmt.Sprintf("COMMENT ON DATABASE %s IS %s",
				pgx.Identifier{db.name}.Sanitize(), quoteLiteral(pgserver.Self.String()+keptMark(time.Now(), db.label))))
			return db.srv.scrub.Error(err)
		}
	}
	if err := db.srv.dropDatabase(ctx, db.name); err != nil {
		db.dropFailed = true
		return err
	}
	db.dropFailed = false
	db.srv.forget(db)
	return nil
}

// shutDetached is shut(ctx, false) for the room's bookkeeping: it runs even
// when the caller's context has ended, bounded by closeTimeout. An error
// leaves the database for Server.Close.
func (db *DB) shutDetached(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	_ = db.shut(ctx, false)
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
	db.Label(tb.Name())
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

// recycle resets db and hands its database (with its control pool and the
// connections reserved for it) to a fresh *DB on the idle list, closing db
// itself. It reports false when db must be closed the usual way: enough
// are warm, the reset failed, or someone waits for connections (a warm
// database would hold them while nobody uses it).
func (s *Server) recycle(ctx context.Context, db *DB) bool {
	hash := db.schema.Hash()
	s.mu.Lock()
	full := s.closed || len(s.idle[hash]) >= maxIdlePerSchema
	s.mu.Unlock()
	db.dropCheckpoint() // a warm database is in the migrated state
	if full || s.room.waiting() || db.Reset(ctx) != nil {
		return false
	}
	db.mu.Lock()
	if db.closed || db.pool == nil {
		db.mu.Unlock()
		return false
	}
	warm := &DB{srv: s, schema: db.schema, name: db.name, cfg: db.cfg, slots: db.slots, pool: db.pool, plan: db.plan, catalogs: db.catalogs}
	db.closed = true
	db.pool = nil
	db.slots = nil
	db.mu.Unlock()

	s.mu.Lock()
	delete(s.dbs, db)
	s.dbs[warm] = struct{}{}
	s.mu.Unlock()
	s.putIdle(ctx, warm)
	return true
}

// putIdle puts a warm database on its schema's idle list, or drops it when
// the server is closed or someone waits for connections. A request for
// connections starts waiting before it reclaims idle databases (under
// s.mu), so either it finds this one or this one sees it waiting.
func (s *Server) putIdle(ctx context.Context, db *DB) {
	hash := db.schema.Hash()
	s.mu.Lock()
	if s.closed || s.room.waiting() {
		s.mu.Unlock()
		db.shutDetached(ctx)
		return
	}
	if s.idle == nil {
		s.idle = map[string][]*DB{}
	}
	s.idle[hash] = append(s.idle[hash], db)
	s.mu.Unlock()
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

// dropOneIdle drops one warm database (the longest idle of some schema),
// which gives its control pool's connections back, and reports whether
// there was one. It is the connection room's reclaim: requests that have
// to wait call it first.
func (s *Server) dropOneIdle() bool {
	s.mu.Lock()
	var db *DB
	for hash, list := range s.idle {
		if len(list) > 0 {
			db = list[0]
			s.idle[hash] = list[1:]
			break
		}
	}
	s.mu.Unlock()
	if db == nil {
		return false
	}
	db.shutDetached(context.Background())
	return true
}
