package twice

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/pgfixture"
)

// Session is a session on the check's database that the check did not
// open, as PostgreSQL's pg_stat_activity shows it: the job connected on
// its own (a pool built from a connection string), so the check sees none
// of its statements.
type Session struct {
	// PID is the session's backend process. Reports do not print it: it
	// changes every run.
	PID int
	// ApplicationName is the session's application_name ("" when the
	// client set none).
	ApplicationName string
	// ClientAddr is the client's address ("" over a Unix socket).
	ClientAddr string
}

// String names the session as a report prints it (without its PID).
func (s Session) String() string {
	app := "no application_name"
	if s.ApplicationName != "" {
		app = fmt.Sprintf("application_name %q", s.ApplicationName)
	}
	from := "over a Unix socket"
	if s.ClientAddr != "" {
		from = "from " + s.ClientAddr
	}
	return "a session with " + app + ", " + from
}

// The application_name of the check's own sessions: the check's worker
// (and any pool a job builds from a.Pool.Config(), which keeps it and stays
// instrumented), the concurrent scenarios' workers and pgfixture's control
// pool. Every other client session on the check's database is the job's
// own connection.
const checkWorkerName = "twice-worker"

var ownSessionNames = []string{checkWorkerName, "twice-attempt-A", "twice-attempt-B", "pgfixture"}

// workerConfig is the connection settings of the check's worker: the
// database's, its sessions named checkWorkerName.
func workerConfig(db *pgfixture.DB) *pgx.ConnConfig {
	cfg := db.ConnConfig()
	params := map[string]string{}
	for k, v := range cfg.RuntimeParams {
		params[k] = v
	}
	params["application_name"] = checkWorkerName
	cfg.RuntimeParams = params
	return cfg
}

// foreignSessionsSQL lists the client sessions on database $1 other than the
// check's: PostgreSQL's own processes (autovacuum, parallel workers, WAL
// senders) are not client backends, and other checks on the same server
// have databases of their own. A session still starting (state NULL: it is
// authenticating and has no application_name yet) is left for a later
// look: it may be one of the check's own pools connecting.
const foreignSessionsSQL = `SELECT pid, coalesce(application_name, ''), coalesce(host(client_addr), '')
FROM pg_stat_activity
WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND state IS NOT NULL AND state <> 'starting'
  AND coalesce(application_name, '') <> ALL($2::text[])
ORDER BY pid`

// lookForSessions returns the sessions on the check's database that the
// check did not open, as PostgreSQL lists them now.
func lookForSessions(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, dbname string) ([]Session, error) {
	rows, err := q.Query(ctx, foreignSessionsSQL, dbname, ownSessionNames)
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

// settledSessions is what the check sees at a point of the reference run
// and when a scenario's attempts are over: the sessions open on its
// database. A session the job has just closed is listed for a moment
// longer, so the check looks again until two looks agree and keeps those
// that stayed: the same job then gets the same answer every run.
func (c *checker) settledSessions(ctx context.Context) ([]Session, error) {
	pool := c.db.Pool()
	look := func() ([]Session, error) {
		ss, err := lookForSessions(ctx, pool, c.db.Name())
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

// sessionWatch looks for sessions the check did not open, again and again,
// while the reference run's attempt runs: a job's own connection lives for
// at least a connection's start and one statement, which is many looks.
type sessionWatch struct {
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	seen map[int]Session
}

// watchSessions starts looking on a connection of the control pool; stop
// ends it and returns every session seen. A watch that cannot get a
// connection sees nothing (the look after the run still happens).
func (c *checker) watchSessions(ctx context.Context) *sessionWatch {
	w := &sessionWatch{stop: make(chan struct{}), done: make(chan struct{}), seen: map[int]Session{}}
	conn, err := c.db.Pool().Acquire(ctx)
	if err != nil {
		close(w.done)
		return w
	}
	look := func() bool {
		ss, err := lookForSessions(ctx, conn, c.db.Name())
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

// end stops the watch and returns the sessions it saw, by PID.
func (w *sessionWatch) end() []Session {
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

// mergeSessions adds the sessions of more that a are missing (by PID).
func mergeSessions(a, more []Session) []Session {
	have := map[int]bool{}
	for _, s := range a {
		have[s.PID] = true
	}
	for _, s := range more {
		if !have[s.PID] {
			a = append(a, s)
			have[s.PID] = true
		}
	}
	return a
}

// unseenWrites names the tables a reference run changed although the check
// saw none of its statements: it compares the run's rows with the seeded
// state's. nil when the run sent a statement through its
// handles or changed nothing.
func (c *checker) unseenWrites(ctx context.Context, ref *ScenarioRun) ([]string, error) {
	for _, a := range ref.Attempts {
		for _, p := range a.Points {
			if p.Kind == faults.SQL {
				return nil, nil
			}
		}
	}
	seeded := c.seededSnapshot() // seeded.go
	var tables []string
	for _, d := range pgfixture.Diff(seeded, ref.Snapshot) {
		tables = append(tables, d.Table)
	}
	return tables, nil
}

// namingTries bounds the clean runs nameUnseenSession plays.
const namingTries = 10

// nameUnseenSession plays the clean run again, at most namingTries times,
// until the watch sees the session of a job whose clean run changed the
// database with no statement seen: a connection opened and closed between
// two looks of the watch escapes it now and then, and the report should
// name it every time. The verdict does not depend on it.
func (c *checker) nameUnseenSession(ctx context.Context, ref *ScenarioRun) {
	for range namingTries {
		again, err := c.scenario(ctx, Scenario{Kind: Once}, playArgs{})
		if err != nil {
			return
		}
		if len(again.Sessions) > 0 {
			ref.Sessions = again.Sessions
			return
		}
	}
}

// foreignSessionProblem says that the job used a connection of its own:
// the sessions the check saw, and the tables a reference run changed with
// no statement seen. Sessions print without their PIDs, each once.
func foreignSessionProblem(sessions []Session, unseen []string) Problem {
	var b strings.Builder
	b.WriteString("the job opened its own connection to the check's database: its statements are not seen")
	said := map[string]bool{}
	var lines []string
	for _, s := range sessions {
		if t := s.String(); !said[t] {
			said[t] = true
			lines = append(lines, t)
		}
	}
	sort.Strings(lines) // by what is printed, never by PID: the same report every run
	for _, t := range lines {
		b.WriteString("\n    " + t)
	}
	if len(unseen) > 0 {
		fmt.Fprintf(&b, "\n    the clean run changed %s although the check saw no statement of it", tableList(unseen))
	}
	b.WriteString("\n  run every statement on a.Pool or a.DB (a pool of your own built with pgxpool.NewWithConfig(ctx, a.Pool.Config()) is seen too), not on a pool opened from a connection string")
	return Problem{Kind: ProblemForeignSession, Text: b.String()}
}

func tableList(tables []string) string {
	if len(tables) == 1 {
		return "table " + tables[0]
	}
	return "tables " + strings.Join(tables, ", ")
}

// clearSessions ends the sessions on the check's database that the check
// did not open, left by the job of an earlier check on this database
// (recycled warm), and waits until PostgreSQL no longer lists them, so
// that this check does not blame its job for them.
func (c *checker) clearSessions(ctx context.Context) {
	pool := c.db.Pool()
	for range 200 {
		ss, err := lookForSessions(ctx, pool, c.db.Name())
		if err != nil || len(ss) == 0 {
			return
		}
		for _, s := range ss {
			_, _ = pool.Exec(ctx, "SELECT pg_terminate_backend($1)", s.PID)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// endLeftoverSessions ends the sessions the job left open on the check's
// database (a pool it never closed), so that the next check on this
// database, recycled warm, does not see them.
func endLeftoverSessions(ctx context.Context, pool *pgxpool.Pool, dbname string) {
	if pool == nil {
		return
	}
	ss, err := lookForSessions(ctx, pool, dbname)
	if err != nil {
		return
	}
	for _, s := range ss {
		_, _ = pool.Exec(ctx, "SELECT pg_terminate_backend($1)", s.PID)
	}
}
