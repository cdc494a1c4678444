package inject

import (
	"context"
	"errors"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Fresh makes the worker's next attempt start as on new sessions, with no
// temporary table, advisory lock, SET, prepared statement or LISTEN of an
// earlier one, and returns the backend process IDs of the sessions it kept.
// An idle session of its pool is kept and reset in place, as a new one would
// start: pgx's caches of prepared statements, its buffered notifications
// and the connection's custom data emptied, DISCARD ALL run, and the
// application's AfterConnect run again. Every other session is ended first:
// one in a transaction or never given back, the *sql.DB's (database/sql
// keeps prepared statements per connection, which DISCARD ALL would drop
// under it), and those of pools built from a.Pool.Config(), which dial
// through the same registry. A session is ended rather than reset when it
// listens for notifications, when a statement sent on it may have defined a
// custom setting (SET app.tenant, set_config: RESET ALL leaves it defined,
// as an empty string, where a new session has none), or when its reset
// fails or takes longer than resetWait. A caller waits until PostgreSQL has
// ended every session of the worker but the kept ones. Nothing may run on
// the worker while it is called.
func (w *Worker) Fresh(ctx context.Context) (kept []uint32) {
	keep := map[*conn]bool{}
	_ = w.eachIdlePoolSession(ConnSetup(ctx), func(idle []*pgxpool.Conn) {
		for _, pc := range idle {
			c := pc.Conn()
			if rc := registered(c.PgConn().Conn()); rc != nil && !c.IsClosed() && !IsCut(rc) && !rc.definedCustom() && c.PgConn().TxStatus() == 'I' {
				keep[rc] = true
			}
		}
		// The others end first: a transaction one of them left open
		// could hold locks the reset or AfterConnect would wait for.
		w.cutAllBut(keep)
	}, func(ctx context.Context, c *pgx.Conn) error {
		if !keep[registered(c.PgConn().Conn())] {
			return nil
		}
		rctx, cancel := context.WithTimeout(ctx, resetWait)
		err := resetSession(rctx, c, w.afterConnect)
		cancel()
		if err != nil {
			_ = c.Close(ctx) // ended: the pool drops it when it is given back
			return nil
		}
		kept = append(kept, c.PgConn().PID())
		return nil
	})
	w.Heal()
	return kept
}

// End ends every session of the worker: the next attempt dials new ones.
// A caller waits until PostgreSQL has ended them. Nothing may run on the
// worker while it is called.
func (w *Worker) End() {
	w.Cut()
	w.Pool.Reset()
	w.Heal()
}

// resetWait bounds the reset of one session in place.
const resetWait = 10 * time.Second

// listeningSQL tells whether a session listens for notifications.
const listeningSQL = `SELECT EXISTS (SELECT FROM pg_listening_channels())`

var errListening = errors.New("the session listens for notifications")

// resetSession resets the idle session c as PostgreSQL and pgx start a new
// one, then runs afterConnect (nil: none) on it, as on a new connection.
// It fails for a session that listens for notifications.
func resetSession(ctx context.Context, c *pgx.Conn, afterConnect func(context.Context, *pgx.Conn) error) error {
	var listening bool
	if err := c.QueryRow(ctx, listeningSQL, pgx.QueryExecModeSimpleProtocol).Scan(&listening); err != nil {
		return err
	}
	if listening {
		return errListening
	}
	drainNotifications(ctx, c)
	clear(c.PgConn().CustomData())
	if err := c.DeallocateAll(ctx); err != nil {
		return err
	}
	if _, err := c.Exec(ctx, "DISCARD ALL", pgx.QueryExecModeSimpleProtocol); err != nil {
		return err
	}
	if afterConnect != nil {
		return afterConnect(ctx, c)
	}
	return nil
}

// drainNotifications drops the notifications pgx buffered on c (a LISTEN
// that ended, its notifications never read), without reading the socket.
func drainNotifications(ctx context.Context, c *pgx.Conn) {
	done, cancel := context.WithCancel(ctx)
	cancel() // pgconn refuses a done context before it reads
	for {
		if n, _ := c.WaitForNotification(done); n == nil {
			return
		}
	}
}

// customSettingSQL matches a statement that may define a custom setting
// (a name with a dot): SET, SET LOCAL, SET SESSION of one, or set_config.
var customSettingSQL = regexp.MustCompile(`(?is)\bset_config\s*\(|\bset\s+(?:local\s+|session\s+)?"?[a-z_][a-z0-9_$]*"?\s*\.`)

// noteStatement marks c's session when sql may define a custom setting.
func noteStatement(c *pgx.Conn, sql string) {
	if c == nil || sql == "" || !customSettingSQL.MatchString(sql) {
		return
	}
	if rc := registered(c.PgConn().Conn()); rc != nil {
		rc.mu.Lock()
		rc.custom = true
		rc.mu.Unlock()
	}
}

// definedCustom reports whether a statement sent on the session may have
// defined a custom setting (noteStatement).
func (w *conn) definedCustom() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.custom
}
