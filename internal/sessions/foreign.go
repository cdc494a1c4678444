package sessions

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Session is a session on the check's database that the check did not
// open, as PostgreSQL's pg_stat_activity shows it. Its fields are
// twice.Session's.
type Session struct {
	PID             int
	ApplicationName string
	ClientAddr      string
}

// The application_name of the check's own sessions: the check's worker
// (and any pool a job builds from a.Pool.Config(), which keeps it and stays
// instrumented), the concurrent scenarios' workers and pgfixture's control
// pool. Every other client session on the check's database is the job's
// own connection.
const WorkerName = "twice-worker"

// OwnNames are the application_names of every session the check opens.
var OwnNames = []string{WorkerName, "twice-attempt-A", "twice-attempt-B", "pgfixture"}

// WorkerConfig is the connection settings of the check's worker: cfg's,
// its sessions named WorkerName.
func WorkerConfig(cfg *pgx.ConnConfig) *pgx.ConnConfig {
	params := map[string]string{}
	for k, v := range cfg.RuntimeParams {
		params[k] = v
	}
	params["application_name"] = WorkerName
	cfg.RuntimeParams = params
	return cfg
}

// foreignSessionsSQL lists the client sessions on database $1 other than the
// check's: PostgreSQL's own processes (autovacuum, parallel workers, WAL
// senders) are not client backends, and other checks on the same server
// have databases of their own. A session still starting (state NULL: it is
// authenticating and has no application_name yet) is left for a later
// look: it may be one of the check's own pools connecting.
var foreignSessionsSQL = `SELECT pid, coalesce(application_name, ''), coalesce(host(client_addr), '')
FROM ` + ActivityOf("$1") + ` AS s
WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state IS NOT NULL AND state <> 'starting'
  AND coalesce(application_name, '') <> ALL($2::text[])
ORDER BY pid`

// Querier is a pool or a connection.
type Querier interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}

// Look returns the sessions on database dbname that the check did not
// open, as PostgreSQL lists them now.
func Look(ctx context.Context, q Querier, dbname string) ([]Session, error) {
	rows, err := q.Query(ctx, foreignSessionsSQL, dbname, OwnNames)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Session, error) {
		var s Session
		var pid int32
		err := r.Scan(&pid, &s.ApplicationName, &s.ClientAddr)
		s.PID = int(pid)
		return s, err
	})
}

// Settled is what the check sees at a point of the reference run and when
// a scenario's attempts are over: the sessions open on database dbname. A
// session the job has just closed is listed for a moment longer, so it
// looks again until two looks agree and keeps those that stayed: the same
// job then gets the same answer every run.
func Settled(ctx context.Context, pool *pgxpool.Pool, dbname string) ([]Session, error) {
	look := func() ([]Session, error) {
		ss, err := Look(ctx, pool, dbname)
		if err != nil && ctx.Err() != nil {
			return nil, nil // the attempt or the check ended: no look to take
		}
		if err != nil {
			return nil, fmt.Errorf("twice: internal error: looking for sessions the check did not open (pg_stat_activity): %w", err)
		}
		return ss, nil
	}
	prev, err := look()
	if err != nil || len(prev) == 0 {
		return nil, err
	}
	for range 40 {
		time.Sleep(5 * time.Millisecond)
		cur, err := look()
		if err != nil {
			return nil, err
		}
		if samePIDs(prev, cur) {
			return cur, nil
		}
		prev = cur
	}
	return prev, nil
}

func samePIDs(a, b []Session) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].PID != b[i].PID {
			return false
		}
	}
	return true
}

// watchPause is the watch's pause between two looks: a look takes a few
// hundred microseconds, a job's own connection lives for at least its start
// and a statement.
const watchPause = 500 * time.Microsecond

// Watch looks for sessions the check did not open, again and again, while
// the reference run's attempt runs: a job's own connection lives for at
// least a connection's start and one statement, which is many looks.
type Watch struct {
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	seen map[int]Session
}

// StartWatch starts looking on a connection of pool; End ends it and
// returns every session seen. A watch that cannot get a connection sees
// nothing (the look after the run still happens).
func StartWatch(ctx context.Context, pool *pgxpool.Pool, dbname string) *Watch {
	w := &Watch{stop: make(chan struct{}), done: make(chan struct{}), seen: map[int]Session{}}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		close(w.done)
		return w
	}
	look := func() bool {
		ss, err := Look(ctx, conn, dbname)
		if err != nil {
			return false
		}
		w.mu.Lock()
		for _, s := range ss {
			w.seen[s.PID] = s
		}
		w.mu.Unlock()
		return true
	}
	if !look() { // the first look before the attempt starts: the watch is running
		conn.Release()
		close(w.done)
		return w
	}
	go func() {
		defer close(w.done)
		defer conn.Release()
		for look() {
			select {
			case <-w.stop:
				return
			case <-time.After(watchPause):
			}
		}
	}()
	return w
}

// End stops the watch and returns the sessions it saw, by PID.
func (w *Watch) End() []Session {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Session, 0, len(w.seen))
	for _, s := range w.seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

// Clear ends the sessions on database dbname that the check did not open,
// left by the job of an earlier check on this database (recycled warm),
// and waits until PostgreSQL no longer lists them, so that this check does
// not blame its job for them.
func Clear(ctx context.Context, pool *pgxpool.Pool, dbname string) {
	for range 200 {
		ss, err := Look(ctx, pool, dbname)
		if err != nil || len(ss) == 0 {
			return
		}
		for _, s := range ss {
			_, _ = pool.Exec(ctx, "SELECT pg_terminate_backend($1)", s.PID)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// EndLeftovers ends the sessions the job left open on database dbname (a
// pool it never closed), so that the next check on this database,
// recycled warm, does not see them.
func EndLeftovers(ctx context.Context, pool *pgxpool.Pool, dbname string) {
	if pool == nil {
		return
	}
	ss, err := Look(ctx, pool, dbname)
	if err != nil {
		return
	}
	for _, s := range ss {
		_, _ = pool.Exec(ctx, "SELECT pg_terminate_backend($1)", s.PID)
	}
}

// Merge adds the sessions of more that a is missing (by PID), each of a
// caller's type S.
func Merge[S Like](a, more []S) []S {
	have := map[int]bool{}
	for _, s := range a {
		have[Session(s).PID] = true
	}
	for _, s := range more {
		if !have[Session(s).PID] {
			a = append(a, s)
			have[Session(s).PID] = true
		}
	}
	return a
}

// Like is a caller's session type with Session's fields.
type Like interface {
	~struct {
		PID             int
		ApplicationName string
		ClientAddr      string
	}
}

// As are sessions as a caller's type S has them (nil stays nil).
func As[S Like](ss []Session) []S {
	if ss == nil {
		return nil
	}
	out := make([]S, len(ss))
	for i, s := range ss {
		out[i] = S(s)
	}
	return out
}

// From are a caller's sessions as Session (nil stays nil).
func From[S Like](ss []S) []Session {
	if ss == nil {
		return nil
	}
	out := make([]Session, len(ss))
	for i, s := range ss {
		out[i] = Session(s)
	}
	return out
}
