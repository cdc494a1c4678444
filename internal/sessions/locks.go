package sessions

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
)

// Ran is an attempt started in the current scenario, for naming a lock's
// holder: its name and its run (whose points record their backends).
type Ran struct {
	Name   string
	Run    *inject.Run
	Worker *inject.Worker // where it ran
}

// lockHoldersSQL lists the sessions holding the locks that the sessions
// $1 names (or, when $1 is empty, the check's worker sessions on this
// database waiting for a lock) wait for.
const lockHoldersSQL = `WITH waiting AS (
  SELECT pid FROM pg_stat_activity
  WHERE datname = current_database() AND (pid = ANY($1::int4[])
    OR (cardinality($1::int4[]) = 0 AND application_name LIKE 'twice-%' AND wait_event_type = 'Lock'))
)
SELECT DISTINCT h.pid, coalesce(h.application_name, '')
FROM waiting w, unnest(pg_blocking_pids(w.pid)) AS b(pid)
JOIN pg_stat_activity h ON h.pid = b.pid`

// LockHolder names who holds the lock the latest statement of run waits
// for in PostgreSQL, each holder named by name, or "" when it waits for
// none (or the check cannot tell). It is asked before the attempt is
// crashed: the crash ends the wait.
func LockHolder(pool *pgxpool.Pool, run *inject.Run, name func(pid uint32, app string) string) string {
	steps := run.Steps()
	if len(steps) == 0 || steps[len(steps)-1].Kind != faults.SQL {
		return ""
	}
	var pids []int32
	if b := steps[len(steps)-1].Backend; b != 0 {
		pids = []int32{int32(b)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := pool.Query(ctx, lockHoldersSQL, pids)
	if err != nil {
		return ""
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var pid int32
		var app string
		if err := rows.Scan(&pid, &app); err != nil {
			return ""
		}
		if n := name(uint32(pid), app); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if rows.Err() != nil {
		return ""
	}
	slices.Sort(names)
	return strings.Join(names, " and ")
}

// HolderName names the session pid (application_name app) that holds a
// lock waiter waits for, from the attempts ran of the scenario; own are
// the application_names of the check's own sessions.
func HolderName(ran []Ran, waiter *inject.Run, pid uint32, app string, own []string) string {
	for i := len(ran) - 1; i >= 0; i-- { // the latest attempt to use the backend holds it
		r := ran[i]
		steps := r.Run.Steps()
		took, ok := lockTaker(steps, pid)
		if !ok {
			continue
		}
		what := fmt.Sprintf("its point %d: %s", took.Index, took.Label)
		if r.Run == waiter {
			return fmt.Sprintf("%s itself, on another of its connections (%s)", r.Name, what)
		}
		crashed, _, _ := r.Run.Crashed()
		if r.Run.Done() && !crashed {
			what += "; it had returned with that transaction still open"
		}
		return fmt.Sprintf("%s (%s)", r.Name, what)
	}
	if app == "" {
		app = "none"
	}
	if slices.Contains(own, app) {
		return fmt.Sprintf("a session of the check (application_name %s) that no attempt of this scenario ran a statement on", app)
	}
	return fmt.Sprintf("a session the check did not open (application_name %s)", app)
}

// lockTaker is the statement on backend pid that most likely took the lock
// its session holds: in the transaction open there (from its latest BEGIN
// on that backend), the first statement that locks rows or tables (a
// write, a SELECT … FOR UPDATE or FOR SHARE, a LOCK, an advisory lock),
// else its latest statement there. ok is false when no point ran on pid.
func lockTaker(steps []faults.Step, pid uint32) (faults.Step, bool) {
	var on []faults.Step
	for _, s := range steps {
		if s.Kind == faults.SQL && s.Backend == pid {
			if strings.EqualFold(strings.TrimSpace(s.Label), "begin") || strings.HasPrefix(strings.ToLower(s.Label), "begin ") {
				on = on[:0]
			}
			on = append(on, s)
		}
	}
	if len(on) == 0 {
		return faults.Step{}, false
	}
	for _, s := range on {
		if locks(s.Label) {
			return s, true
		}
	}
	return on[len(on)-1], true
}

// locks reports whether a statement's label is of one that takes a lock
// held to the end of its transaction.
func locks(label string) bool {
	l := strings.ToUpper(label)
	for _, p := range []string{"INSERT", "UPDATE", "DELETE", "MERGE", "LOCK", "WITH"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return strings.Contains(l, " FOR UPDATE") || strings.Contains(l, " FOR SHARE") ||
		strings.Contains(l, " FOR NO KEY UPDATE") || strings.Contains(l, " FOR KEY SHARE") ||
		strings.Contains(l, "PG_ADVISORY_XACT_LOCK") || strings.Contains(l, "PG_ADVISORY_LOCK")
}

// An attempt can return with its session still holding a lock: a session
// advisory lock (pg_advisory_lock without its unlock), or any lock of a
// transaction it left open. The other concurrent attempt then waits for it
// until the scheduler reports it stuck; the report names the lock (an
// advisory one by its key) and the attempt whose session held it, as
// PostgreSQL saw them before the check crashed the waiter.

// HeldLock is a lock a stuck attempt waited for that the session of an
// attempt that had returned still held.
type HeldLock struct {
	What    string // "the session advisory lock (4242)", "a lock of the transaction it left open", …
	Session bool   // a session advisory lock (held by an idle session)
	Open    bool   // held by a transaction left open
}

// waitedLockSQL describes the lock session $1 waits for: an advisory one by
// its key (as internal/sessionstate prints it), else its lock type; and whether
// every session holding it is idle (a session-level lock) or idle in a
// transaction (one left open).
const waitedLockSQL = `SELECT l.locktype = 'advisory',
  CASE WHEN l.locktype <> 'advisory' THEN '' WHEN l.objsubid = 1
    THEN ((l.classid::int8 << 32) | l.objid::int8)::text
    ELSE (l.classid::int8 - CASE WHEN l.classid::int8 >= 2147483648 THEN 4294967296 ELSE 0 END)::text || ', '
      || (l.objid::int8 - CASE WHEN l.objid::int8 >= 2147483648 THEN 4294967296 ELSE 0 END)::text END
    || CASE WHEN l.locktype = 'advisory' AND l.mode = 'ShareLock' THEN ', shared' ELSE '' END,
  coalesce((SELECT bool_and(h.state = 'idle') FROM pg_stat_activity h WHERE h.pid = ANY(pg_blocking_pids($1))), false),
  coalesce((SELECT bool_and(h.state LIKE 'idle in transaction%') FROM pg_stat_activity h WHERE h.pid = ANY(pg_blocking_pids($1))), false)
FROM pg_locks l WHERE l.pid = $1 AND NOT l.granted LIMIT 1`

// WaitedLock describes the lock the latest statement of run waits for, as
// one held by an attempt that returned; ok is false when it waits for none
// (or the check cannot tell).
func WaitedLock(pool *pgxpool.Pool, run *inject.Run) (HeldLock, bool) {
	steps := run.Steps()
	if len(steps) == 0 || steps[len(steps)-1].Kind != faults.SQL || steps[len(steps)-1].Backend == 0 {
		return HeldLock{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var advisory, idle, open bool
	var key string
	err := pool.QueryRow(ctx, waitedLockSQL, int32(steps[len(steps)-1].Backend)).Scan(&advisory, &key, &idle, &open)
	if err != nil {
		return HeldLock{}, false
	}
	switch {
	case advisory && idle:
		return HeldLock{What: "the session advisory lock (" + key + ")", Session: true}, true
	case advisory && open:
		return HeldLock{What: "the advisory lock (" + key + ") of a transaction it left open", Open: true}, true
	case open:
		return HeldLock{What: "a lock of a transaction it left open", Open: true}, true
	}
	return HeldLock{What: "a lock"}, true
}
