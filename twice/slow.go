package twice

import (
	"context"
	"time"

	"github.com/twicekit/twicekit/faults"
)

// A slow job is not a hung one. When an attempt runs past AttemptTimeout,
// the check asks PostgreSQL whether the attempt's latest statement is still
// running there (pg_stat_activity: its backend active): then the attempt is
// slow, and the report says how to give it more time; else it was doing
// nothing the check can see (waiting outside its handles).

// runningInPostgres reports whether the latest point of the attempt is a
// statement still running in PostgreSQL: its backend active (pgx names the
// backend), or, for a driver that does not, a session of the check's
// workers active on the check's database.
func (ra *runningAttempt) runningInPostgres() bool {
	steps := ra.run.Steps()
	if len(steps) == 0 {
		return false
	}
	last := steps[len(steps)-1]
	if last.Kind != faults.SQL {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var active bool
	var err error
	if last.Backend != 0 {
		err = ra.c.db.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1 AND state = 'active')`,
			int64(last.Backend)).Scan(&active)
	} else {
		err = ra.c.db.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
			AND application_name LIKE 'twice-%')`).Scan(&active)
	}
	return err == nil && active
}
