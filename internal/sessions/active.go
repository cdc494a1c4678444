package sessions

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A slow job is not a hung one. When an attempt runs past AttemptTimeout,
// the check asks PostgreSQL whether the attempt's latest statement is still
// running there (pg_stat_activity: its backend active): then the attempt is
// slow, and the report says how to give it more time; else it was doing
// nothing the check can see (waiting outside its handles).

// StillRunning reports whether a statement is still running in PostgreSQL:
// on backend (pgx names the backend), or, for a driver that does not
// (backend 0), on a session of the check's workers active on the check's
// database. pool is the check's control pool.
func StillRunning(pool *pgxpool.Pool, backend uint32) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var active bool
	var err error
	if backend != 0 {
		err = pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1 AND state = 'active')`,
			int64(backend)).Scan(&active)
	} else {
		err = pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
			AND application_name LIKE 'twice-%')`).Scan(&active)
	}
	return err == nil && active
}
