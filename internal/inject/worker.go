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
func NewWorker(cfg *pgx.ConnConfig) (*Worker, error) {
	w := &Worker{Conns: NewConns()}
	pcfg, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, fmt.Errorf("twice: internal error: pool config: %w", err)
	}
	pcfg.ConnConfig = cfg.Copy()
	pcfg.MaxConns = maxWorkerConns
	pcfg.MinConns = 0
	InstrumentPool(pcfg, w.Conns, w.recordForeign)
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		return nil, fmt.Errorf("twice: internal error: pool: %w", err)
	}
	scfg := cfg.Copy()
	Instrument(scfg, w.Conns, w.recordForeign)
	w.Pool = pool
	w.DB = stdlib.OpenDB(*scfg)
	w.DB.SetMaxOpenConns(maxWorkerConns)
	w.DB.SetMaxIdleConns(maxWorkerConns)
	return w, nil
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
