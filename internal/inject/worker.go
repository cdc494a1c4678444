package inject

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// Worker is the database side of one queue worker: a pgx pool and a
// *sql.DB (pgx's database/sql driver), both instrumented, sharing one
// registry of connections. Attempts run on a worker one at a time and reuse
// its warm connections; a crash cuts them and [Worker.Heal] drops the dead
// ones before the next attempt.
type Worker struct {
	Pool  *pgxpool.Pool
	DB    *sql.DB
	Conns *Conns
	// Owner is the attempt running on the worker: a call on its handles
	// without an attempt's context is that attempt's.
	Owner *Owner

	mu      sync.Mutex
	foreign []string
	cuts    []func()

	// setUp hears of every new connection once the application's
	// AfterConnect has set it up (see [Worker.OnSetUp]).
	setUp atomic.Pointer[func(context.Context, *pgx.Conn)]

	// afterConnect is the pool's AfterConnect (the application's, then
	// setUp), nil when the application set none: [Worker.Fresh] runs it
	// again on a session it resets in place.
	afterConnect func(context.Context, *pgx.Conn) error
}

// sessionForever is the lifetime and idle time of a worker's pool
// connections: longer than any check.
const sessionForever = 100 * 365 * 24 * time.Hour

// maxWorkerConns bounds the connections of each of a worker's handles.
const maxWorkerConns = 4

// MaxConnsPerWorker is the most connections one Worker opens: its pgx pool's
// and its *sql.DB's (pgx's or the one [Worker.UseDriver] puts in its place),
// 4 each. Callers reserve that many per worker on servers with a connection
// limit.
const MaxConnsPerWorker = 2 * maxWorkerConns

// NewWorker builds a worker on a copy of cfg. Connections are made lazily.
func NewWorker(cfg *pgx.ConnConfig) (*Worker, error) { return NewWorkerConfigured(cfg, nil) }

// NewWorkerConfigured is [NewWorker] with the application's own pool
// configuration: configure (nil for none) gets the worker's pool config, as
// the application's code gets its own, and may set anything an application
// sets (AfterConnect registering types, RuntimeParams, the exec mode, a
// tracer, the pool's hooks). Then the check takes back what is its own: where
// the worker connects, its session name, its bounds on connections (their
// number, lifetime and idle time), and its instrumentation (its tracer
// before the application's, its hooks before the application's). The *sql.DB gets the same ConnConfig and AfterConnect.
func NewWorkerConfigured(cfg *pgx.ConnConfig, configure func(*pgxpool.Config)) (*Worker, error) {
	w := &Worker{Conns: NewConns()}
	w.Owner = NewOwner(w.recordForeign)
	pcfg, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, fmt.Errorf("twice: internal error: pool config: %w", err)
	}
	pcfg.ConnConfig = cfg.Copy()
	if configure != nil {
		configure(pcfg)
		keepTarget(pcfg.ConnConfig, cfg)
	}
	pcfg.MaxConns = maxWorkerConns
	pcfg.MinConns = 0
	pcfg.MinIdleConns = 0
	// Sessions last until the check ends them (Fresh, Cut), not until a
	// lifetime or an idle time of the application's runs out mid-check.
	// (Not 0: in pgx 5.8 and 5.9 a lifetime of 0 expires every connection
	// at once, and the pool destroys each one given back.)
	pcfg.MaxConnLifetime, pcfg.MaxConnLifetimeJitter = sessionForever, 0
	pcfg.MaxConnIdleTime = sessionForever
	scfg := pcfg.ConnConfig.Copy()
	var sqlOpts []stdlib.OptionOpenDB
	if after := pcfg.AfterConnect; after != nil {
		// What the application does on a new connection is not a point: a
		// cold connection would otherwise have points a warm one has not.
		pcfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			if err := after(ConnSetup(ctx), c); err != nil {
				return err
			}
			if f := w.setUp.Load(); f != nil {
				(*f)(ConnSetup(ctx), c)
			}
			return nil
		}
		sqlOpts = append(sqlOpts, stdlib.OptionAfterConnect(pcfg.AfterConnect))
		w.afterConnect = pcfg.AfterConnect
	}
	InstrumentPool(pcfg, w.Conns, w.Owner)
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		return nil, fmt.Errorf("twice: internal error: pool: %w", err)
	}
	Instrument(scfg, w.Conns, w.Owner)
	w.Pool = pool
	w.DB = stdlib.OpenDB(*scfg, sqlOpts...)
	w.DB.SetMaxOpenConns(maxWorkerConns)
	w.DB.SetMaxIdleConns(maxWorkerConns)
	return w, nil
}

// keepTarget puts back on got what an application's configuration must not
// change on the check's worker: the server, database and role it connects
// as, and the session parameters the check relies on (application_name,
// default_transaction_isolation of a concurrent worker); the application's
// other RuntimeParams stay.
func keepTarget(got, want *pgx.ConnConfig) {
	got.Host, got.Port, got.Database, got.User, got.Password = want.Host, want.Port, want.Database, want.User, want.Password
	got.TLSConfig, got.Fallbacks = want.TLSConfig, want.Fallbacks
	params := map[string]string{}
	for k, v := range got.RuntimeParams {
		params[k] = v
	}
	for _, k := range []string{"application_name", "default_transaction_isolation"} {
		if v, ok := want.RuntimeParams[k]; ok {
			params[k] = v
		} else {
			delete(params, k)
		}
	}
	got.RuntimeParams = params
}

func (w *Worker) recordForeign(label string) {
	w.mu.Lock()
	w.foreign = append(w.foreign, label)
	w.mu.Unlock()
}

// TakeForeign returns and clears the statements sent with a context that
// belonged to no attempt.
func (w *Worker) TakeForeign() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.foreign
	w.foreign = nil
	return f
}

// Cut cuts every connection of the worker (the crash of its attempt).
func (w *Worker) Cut() { w.cutAllBut(nil) }

// cutAllBut is Cut, sparing the connections in keep.
func (w *Worker) cutAllBut(keep map[*conn]bool) {
	w.Conns.cutAllBut(keep)
	w.mu.Lock()
	cuts := append([]func(){}, w.cuts...)
	w.mu.Unlock()
	for _, cut := range cuts {
		cut()
	}
}

// OnCut adds f to what Cut does: handles built outside the worker (a
// database/sql driver of the user's choice) register their own cut here.
func (w *Worker) OnCut(f func()) {
	w.mu.Lock()
	w.cuts = append(w.cuts, f)
	w.mu.Unlock()
}

// RecordForeign notes a call made with a context that belongs to no attempt,
// for handles built outside the worker.
func (w *Worker) RecordForeign(label string) { w.recordForeign(label) }

// Heal drops the connections a crash cut, so the next attempt starts on live
// ones. Connections that were not cut stay warm.
func (w *Worker) Heal() {
	// The pool checks every connection on acquire and release (PrepareConn,
	// AfterRelease); database/sql has no such hook, so flush its idle ones.
	w.DB.SetMaxIdleConns(0)
	w.DB.SetMaxIdleConns(maxWorkerConns)
}

// Close closes both handles. A pool connection that a job never gave back
// (a pgx transaction it returned without ending) would keep the pool's
// Close waiting forever: then the worker's connections are cut and the pool
// is closed in the background (after leftOpenWait), done once that
// transaction is ended (if ever).
func (w *Worker) Close() {
	if w.Pool.Stat().AcquiredConns() == 0 {
		w.Pool.Close()
	} else {
		w.Cut()
		closed := make(chan struct{})
		go func() {
			w.Pool.Close()
			close(closed)
		}()
		wait := time.NewTimer(leftOpenWait)
		select {
		case <-closed: // a connection being given back as Close began
		case <-wait.C:
		}
		wait.Stop()
	}
	_ = w.DB.Close()
}

// waitUntil waits until done reports true, at most bound: it yields first
// (what it waits for is a goroutine's next step), then sleeps.
func waitUntil(done func() bool, bound time.Duration) {
	deadline := time.Now().Add(bound)
	for i := 0; !done(); i++ {
		if time.Now().After(deadline) {
			return
		}
		if i < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// settleWait bounds how long [Worker.EachIdleSession] waits for the pool's
// connections being given back.
const settleWait = 100 * time.Millisecond

// leftOpenWait bounds how long Close waits for the pool's connections to
// be given back before it leaves the pool to close in the background.
const leftOpenWait = 2 * time.Second

// OnSetUp makes f hear of every new connection of the worker (its pool's and
// its *sql.DB's, when pgx's) once the application's AfterConnect has set it
// up, with a context whose statements are no point of any attempt. f is
// called only when the application configured an AfterConnect: without one,
// a new session is as PostgreSQL starts it.
func (w *Worker) OnSetUp(f func(ctx context.Context, c *pgx.Conn)) { w.setUp.Store(&f) }

// eachIdlePoolSession is [Worker.EachIdleSession] on the pool's sessions
// only; ctx is ConnSetup's already. before (nil: none) sees the idle
// sessions once they are taken, before f does.
func (w *Worker) eachIdlePoolSession(ctx context.Context, before func([]*pgxpool.Conn), f func(ctx context.Context, c *pgx.Conn) error) error {
	// A pool connection is given back on a goroutine of its own: wait
	// for those the last attempt gave back to land, or a look (and the
	// next attempt) could miss a session that is the pool's again a moment
	// later. One a job kept (a transaction it left open) never lands.
	waitUntil(func() bool { return w.Pool.Stat().AcquiredConns() == 0 }, settleWait)
	idle := w.Pool.AcquireAllIdle(ctx) // the most recently used first
	if before != nil {
		before(idle)
	}
	var first error
	for _, c := range idle {
		if err := f(ctx, c.Conn()); err != nil && first == nil {
			first = err
		}
	}
	// Given back in reverse, each once the pool has it again (a release
	// lands on its own goroutine), so that the next attempt is handed the
	// session it would have been handed without the look.
	for i := len(idle) - 1; i >= 0; i-- {
		before := w.Pool.Stat().IdleConns()
		kept := !idle[i].Conn().IsClosed() && idle[i].Conn().PgConn().TxStatus() == 'I'
		idle[i].Release()
		if kept {
			waitUntil(func() bool { return w.Pool.Stat().IdleConns() > before }, time.Second)
		}
	}
	return first
}

// EachIdleSession calls f on every idle session of the worker: its pool's
// and, when the *sql.DB is pgx's, its *sql.DB's. Its context's statements
// are no point of any attempt and no foreign call. Nothing may run on the
// worker while it is called. It first waits (at most 100 ms) for the pool's
// connections being given back, so that it sees every session the last
// attempt used. It returns f's first error, after giving every session back
// in the order the pool had them.
func (w *Worker) EachIdleSession(ctx context.Context, f func(ctx context.Context, c *pgx.Conn) error) error {
	ctx = ConnSetup(ctx)
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	// A pool connection is given back on a goroutine of its own: wait
	// for those the last attempt gave back to land, or a look (and the
	// next attempt) could miss a session that is the pool's again a moment
	// later. One a job kept (a transaction it left open) never lands.
	keep(w.eachIdlePoolSession(ctx, nil, f))
	var held []*sql.Conn
	for range w.DB.Stats().Idle {
		c, err := w.DB.Conn(ctx)
		if err != nil {
			keep(err)
			break
		}
		held = append(held, c)
		keep(c.Raw(func(dc any) error {
			if sc, ok := dc.(*stdlib.Conn); ok {
				return f(ctx, sc.Conn())
			}
			return nil // another driver's connection: not one the check can read
		}))
	}
	for i := len(held) - 1; i >= 0; i-- { // in reverse, as the pool's
		_ = held[i].Close()
	}
	return first
}
