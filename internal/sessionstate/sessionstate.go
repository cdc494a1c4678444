// Package sessionstate reads what a PostgreSQL session keeps across
// transactions: temporary tables, views and sequences, session advisory
// locks, parameters SET for the session, statements made with SQL PREPARE,
// and the channels it LISTENs on. twice reads it on a worker's idle
// sessions before a redelivery (internal/checkstate), and leaves out what
// the application's AfterConnect set up (SetUp). It says which attempts of
// the scenario left each item: the ones that ran on the session since the
// last look at it (left.go). It says, in a finding's hints, which attempts
// started on a session an earlier delivery had left state on (hints.go).
// It reads the current scenario as internal/checkstate keeps it: whether an
// attempt ran on a worker, that worker's sessions started afresh before a
// redelivery there, what the redelivery finds on them (scenario.go).
package sessionstate

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/internal/inject"
)

// stateSQL lists, on the session it runs on, the state that outlives
// a transaction. pgx's own prepared statements (made with the protocol, not
// with SQL PREPARE) are the driver's, not the job's, and are left out; an
// advisory lock held by an idle session is a session-level one.
const stateSQL = `SELECT pg_backend_pid(),
ARRAY(SELECT CASE c.relkind WHEN 'v' THEN 'temporary view ' WHEN 'm' THEN 'temporary materialized view '
    WHEN 'S' THEN 'temporary sequence ' ELSE 'temporary table ' END || c.relname
  FROM pg_class c WHERE c.relnamespace = pg_my_temp_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
  ORDER BY c.relname)
|| ARRAY(SELECT 'advisory lock (' || CASE WHEN l.objsubid = 1
      THEN ((l.classid::int8 << 32) | l.objid::int8)::text
      ELSE (l.classid::int8 - CASE WHEN l.classid::int8 >= 2147483648 THEN 4294967296 ELSE 0 END)::text || ', '
        || (l.objid::int8 - CASE WHEN l.objid::int8 >= 2147483648 THEN 4294967296 ELSE 0 END)::text END
    || CASE WHEN l.mode = 'ShareLock' THEN ', shared' ELSE '' END || ')'
  FROM pg_locks l WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.granted
  ORDER BY l.objsubid, l.classid, l.objid, l.mode)
|| ARRAY(SELECT 'prepared statement ' || p.name FROM pg_prepared_statements p WHERE p.from_sql ORDER BY p.name)
|| ARRAY(SELECT 'LISTEN ' || ch FROM pg_listening_channels() AS ch ORDER BY ch)`

// setsSQL lists the parameters SET for the session it runs on (not
// SET LOCAL, which ends with its transaction) to a value other than the
// session's start. pg_settings builds every parameter's row, which costs
// more than the rest of the look, so it is read only after a statement
// that may have SET one (SetsSession).
const setsSQL = `SELECT ARRAY(SELECT 'SET ' || s.name FROM pg_settings s
  WHERE s.source = 'session' AND s.setting IS DISTINCT FROM s.reset_val ORDER BY s.name)`

// SetsSession reports whether label may be of a statement that SETs a
// parameter for the session: one of its statements is a SET (not SET
// LOCAL, SET TRANSACTION, SET SESSION CHARACTERISTICS or SET CONSTRAINTS,
// which end with the transaction), or it calls set_config. A SET inside a
// function the job calls is not seen.
func SetsSession(label string) bool {
	l := strings.ToLower(label)
	if strings.Contains(l, "set_config") {
		return true
	}
	for _, stmt := range strings.Split(l, ";") {
		f := strings.Fields(stmt)
		if len(f) < 2 || f[0] != "set" {
			continue
		}
		next := f[1]
		if next == "session" && len(f) > 2 {
			next = f[2]
		}
		switch next {
		case "local", "transaction", "characteristics", "constraints":
			continue
		}
		return true
	}
	return false
}

// Read reads the state of the session c (stateSQL), and
// its parameters SET for the session when sets (setsSQL).
func Read(ctx context.Context, c *pgx.Conn, sets bool) (uint32, []string, error) {
	var pid int32
	var state []string
	if err := c.QueryRow(ctx, stateSQL, pgx.QueryExecModeSimpleProtocol).Scan(&pid, &state); err != nil {
		return 0, nil, err
	}
	if sets {
		var set []string
		if err := c.QueryRow(ctx, setsSQL, pgx.QueryExecModeSimpleProtocol).Scan(&set); err != nil {
			return 0, nil, err
		}
		state = append(state, set...)
	}
	return uint32(pid), state, nil
}

// SetUp is what each session of a worker held once the application's
// AfterConnect had set it up, by backend PID: a session's start, which no
// delivery left there.
type SetUp struct {
	mu    sync.Mutex
	start map[uint32][]string
}

// Watch makes w record the start of each new session.
func (s *SetUp) Watch(w *inject.Worker) {
	w.OnSetUp(func(ctx context.Context, c *pgx.Conn) {
		pid, state, err := Read(ctx, c, true)
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.start == nil {
			s.start = map[uint32][]string{}
		}
		s.start[pid] = state
		s.mu.Unlock()
	})
}

// Left is what of state the session pid did not start with.
func (s *SetUp) Left(pid uint32, state []string) []string {
	s.mu.Lock()
	start := s.start[pid]
	s.mu.Unlock()
	var out []string
	for _, x := range state {
		if !slices.Contains(start, x) {
			out = append(out, x)
		}
	}
	return out
}
