package sched

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/internal/sessions"
)

// Locks asks the database which attempts wait for which: the scheduler's
// window into lock waits.
type Locks interface {
	// Waits reports the lock waits of the attempts; pids[i] lists the
	// backend PIDs known to belong to attempt i (from its points; possibly
	// none, when the driver does not tell).
	Waits(ctx context.Context, pids [][]uint32) (Waits, error)
}

// Waits is what [Locks] found.
type Waits struct {
	// On[i] lists the attempts whose locks attempt i waits for (it may name
	// i itself when the attempt waits for another of its own sessions).
	On [][]int
	// Foreign[i]: attempt i waits only for sessions that are no attempt's.
	Foreign []bool
}

// Querier is what [PostgresLocks] needs of a connection pool (a
// *pgxpool.Pool or a *pgx.Conn): a control connection that is none of the
// attempts'.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// PostgresLocks asks PostgreSQL through q, a control connection, as
// PostgreSQL's isolation tester does: pg_blocking_pids for heavyweight locks
// (row, table, transaction and advisory locks, unique-index insertion
// waits), and pg_safe_snapshot_blocking_pids for SERIALIZABLE READ ONLY
// DEFERRABLE transactions waiting for a safe snapshot. An attempt's sessions
// are the backends its points ran on and, when names[i] is set, every
// session of the current database whose application_name is names[i] (for
// drivers that do not report backend PIDs).
func PostgresLocks(q Querier, names ...string) Locks { return pgLocks{q, names} }

type pgLocks struct {
	q     Querier
	names []string
}

var waitsSQL = `SELECT pid, application_name, pg_blocking_pids(pid) || pg_safe_snapshot_blocking_pids(pid)
FROM ` + sessions.ActivityOf("current_database()") + ` AS s
WHERE pid = ANY($1::int4[]) OR application_name = ANY($2::text[])`

func (l pgLocks) Waits(ctx context.Context, pids [][]uint32) (Waits, error) {
	var all []int32
	owner := map[uint32]int{}
	for i, ps := range pids {
		for _, p := range ps {
			all = append(all, int32(p))
			owner[p] = i
		}
	}
	names := make([]string, 0, len(l.names))
	for _, n := range l.names {
		if n != "" {
			names = append(names, n)
		}
	}
	rows, err := l.q.Query(ctx, waitsSQL, all, names)
	if err != nil {
		return Waits{}, fmt.Errorf("concurrent: asking PostgreSQL for lock waits: %w", err)
	}
	type session struct {
		pid uint32
		by  []int32
	}
	var sessions []session
	for rows.Next() {
		var pid int32
		var app *string
		var by []int32
		if err := rows.Scan(&pid, &app, &by); err != nil {
			rows.Close()
			return Waits{}, fmt.Errorf("concurrent: reading lock waits: %w", err)
		}
		if _, ok := owner[uint32(pid)]; !ok && app != nil {
			if i := slices.Index(l.names, *app); i >= 0 && *app != "" {
				owner[uint32(pid)] = i
			}
		}
		sessions = append(sessions, session{uint32(pid), by})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Waits{}, fmt.Errorf("concurrent: reading lock waits: %w", err)
	}
	w := Waits{On: make([][]int, len(pids)), Foreign: make([]bool, len(pids))}
	for _, s := range sessions {
		i, ok := owner[s.pid]
		if !ok || i >= len(pids) || len(s.by) == 0 {
			continue
		}
		known := false
		for _, b := range s.by {
			if j, ok := owner[uint32(b)]; ok && j < len(pids) {
				known = true
				if !slices.Contains(w.On[i], j) {
					w.On[i] = append(w.On[i], j)
				}
			}
		}
		if !known {
			w.Foreign[i] = true
		}
	}
	for i := range w.On {
		slices.Sort(w.On[i])
		if len(w.On[i]) > 0 {
			w.Foreign[i] = false
		}
	}
	return w, nil
}
