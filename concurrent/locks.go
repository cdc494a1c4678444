package concurrent

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Locks asks the database which sessions block which: the scheduler's
// window into lock waits.
type Locks interface {
	// Blockers returns, for each backend PID in pids that is waiting, the
	// PIDs of the sessions it waits for. PIDs that do not wait are absent.
	Blockers(ctx context.Context, pids []uint32) (map[uint32][]uint32, error)
}

// Querier is what [PostgresLocks] needs of a connection pool (a
// *pgxpool.Pool or a *pgx.Conn): it must not be one of the attempts'.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// PostgresLocks asks PostgreSQL through q, a control connection, as
// PostgreSQL's isolation tester does: pg_blocking_pids for heavyweight locks
// (row, table, transaction and advisory locks, unique-index insertion
// waits), and pg_safe_snapshot_blocking_pids for SERIALIZABLE READ ONLY
// DEFERRABLE transactions waiting for a safe snapshot.
func PostgresLocks(q Querier) Locks { return pgLocks{q} }

type pgLocks struct{ q Querier }

const blockersSQL = `SELECT p, pg_blocking_pids(p) || pg_safe_snapshot_blocking_pids(p)
FROM unnest($1::int4[]) AS p
WHERE cardinality(pg_blocking_pids(p) || pg_safe_snapshot_blocking_pids(p)) > 0`

func (l pgLocks) Blockers(ctx context.Context, pids []uint32) (map[uint32][]uint32, error) {
	arg := make([]int32, len(pids))
	for i, p := range pids {
		arg[i] = int32(p)
	}
	rows, err := l.q.Query(ctx, blockersSQL, arg)
	if err != nil {
		return nil, fmt.Errorf("concurrent: asking PostgreSQL for lock waits: %w", err)
	}
	defer rows.Close()
	out := map[uint32][]uint32{}
	for rows.Next() {
		var p int32
		var by []int32
		if err := rows.Scan(&p, &by); err != nil {
			return nil, fmt.Errorf("concurrent: reading lock waits: %w", err)
		}
		for _, b := range by {
			out[uint32(p)] = append(out[uint32(p)], uint32(b))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("concurrent: reading lock waits: %w", err)
	}
	return out, nil
}
