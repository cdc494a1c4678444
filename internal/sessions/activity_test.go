package sessions

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
)

// activityColumns are the columns of pg_stat_activity that ActivityOf's
// rows are compared on: every one the check reads, and the rest that stay
// put while nothing runs.
const activityColumns = `datid, pid, usesysid, application_name, coalesce(host(client_addr), ''), state, backend_type, query`

// TestActivityOfIsPgStatActivity holds ActivityOf to the view it stands for:
// with sessions of several names on two databases (idle, idle in a
// transaction, waiting for a lock), its rows for each database, and for the
// current one, are pg_stat_activity's rows with that datname, taken in the
// same transaction (one snapshot of the backends).
func TestActivityOfIsPgStatActivity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dbs := []*pgfixture.DB{
		pgfixture.New(t, pgfixture.SQL("CREATE TABLE t (id int PRIMARY KEY)")),
		pgfixture.New(t, pgfixture.SQL("CREATE TABLE u (id int PRIMARY KEY)")),
	}
	var held []*pgxpool.Conn
	var pools []*pgxpool.Pool
	defer func() { // the connections go back before their pools close
		for _, c := range held {
			c.Release()
		}
		for _, p := range pools {
			p.Close()
		}
	}()
	for i, db := range dbs {
		for j, name := range []string{WorkerName, "twice-attempt-A", "app"} {
			cfg := db.ConnConfig()
			cfg.RuntimeParams = map[string]string{"application_name": fmt.Sprintf("%s-%d", name, i)}
			if j == 0 {
				cfg.RuntimeParams["application_name"] = name
			}
			pcfg, err := pgxpool.ParseConfig("")
			require.NoError(t, err)
			pcfg.ConnConfig = cfg
			pool, err := pgxpool.NewWithConfig(ctx, pcfg)
			require.NoError(t, err)
			pools = append(pools, pool)
			c, err := pool.Acquire(ctx)
			require.NoError(t, err)
			held = append(held, c)
		}
	}
	// One session idle in a transaction holding a row lock, another waiting for it.
	_, err := held[0].Exec(ctx, "BEGIN; INSERT INTO t VALUES (1)")
	require.NoError(t, err)
	waitDone := make(chan error, 1)
	go func() {
		_, err := held[1].Exec(ctx, "INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING")
		waitDone <- err
	}()
	defer func() { // the lock goes and the waiting insert ends before the connections go back
		_, err := held[0].Exec(ctx, "ROLLBACK")
		require.NoError(t, err)
		require.NoError(t, <-waitDone)
	}()
	require.Eventually(t, func() bool {
		var waiting bool
		err := dbs[0].Pool().QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock')`, held[1].Conn().PgConn().PID()).Scan(&waiting)
		return err == nil && waiting
	}, 10*time.Second, 10*time.Millisecond, "the second session never waited for the first one's lock")

	rowsOf := func(tx pgx.Tx, sql string, args ...any) string {
		rows, err := tx.Query(ctx, "SELECT "+activityColumns+" FROM "+sql+" ORDER BY pid", args...)
		require.NoError(t, err)
		defer rows.Close()
		var lines []string
		for rows.Next() {
			vals, err := rows.Values()
			require.NoError(t, err)
			lines = append(lines, fmt.Sprint(vals...))
		}
		require.NoError(t, rows.Err())
		return strings.Join(lines, "\n")
	}
	for _, db := range dbs {
		tx, err := db.Pool().Begin(ctx)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(ctx) }() // (a failed comparison too: the database's pool waits for it)
		want := rowsOf(tx, "pg_stat_activity WHERE datname = $1", db.Name())
		require.GreaterOrEqual(t, strings.Count(want, "\n"), 3, "pg_stat_activity lists the sessions held and the one asking:\n%s", want)
		require.Equal(t, want, rowsOf(tx, ActivityOf("$1")+" AS s", db.Name()), "ActivityOf($1) on %s", db.Name())
		require.Equal(t, want, rowsOf(tx, ActivityOf("current_database()")+" AS s"), "ActivityOf(current_database()) on %s", db.Name())
	}
}
