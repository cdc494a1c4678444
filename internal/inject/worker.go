package inject

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

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
}

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
// the worker connects, its session name, its bounds on connections, and its
// instrumentation (its tracer before the application's, its hooks before the
// application's). The *sql.DB gets the same ConnConfig and AfterConnect.
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
	scfg := pcfg.ConnConfig.Copy()
	var sqlOpts []stdlib.OptionOpenDB
	if after := pcfg.AfterConnect; after != nil {
		// What the application does on a new connection is not a point: a
		// cold connection would otherwise have points a warm one has not.
		pcfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error { return after(ConnSetup(ctx), c) }
		sqlOpts = append(sqlOpts, stdlib.OptionAfterConnect(pcfg.AfterConnect))
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
func (w *Worker) Cut() {
	w.Conns.CutAll()
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

// Close closes both handles.
func (w *Worker) Close() {
	w.Pool.Close()
	_ = w.DB.Close()
}

// Fresh ends every session of the worker (its pool's, its *sql.DB's, and
// those of pools built from a.Pool.Config(), which dial through the same
// registry): the next attempt starts on new sessions, with no temporary
// table, advisory lock, SET, prepared statement or LISTEN of an earlier one.
// Nothing may run on the worker while it is called.
func (w *Worker) Fresh() {
	w.Cut()
	w.Pool.Reset()
	w.Heal()
}
