package checkstate

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/internal/concurrentplay"
	"github.com/twicekit/twicekit/internal/handles"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessions"
)

// Concurrency is what the concurrent scenarios of a check share: a worker
// per attempt (the check's own and a second one, both under the chosen
// isolation level).
type Concurrency struct {
	Workers [2]*inject.Worker
	Names   [2]string // the application_name of each worker's sessions ("": the check's worker)
}

// ConcurrentWorkers makes the workers of the concurrent scenarios, once per
// check: the check's worker and a second one, or two new ones when the
// scenarios run under another isolation level or on another database/sql
// driver (concurrentplay.Workers). They close with the check.
func (s *State[A]) ConcurrentWorkers() error {
	if s.Concurrent != nil {
		return nil
	}
	workers, names, err := concurrentplay.Workers(s.Worker, s.Opts.ConcurrentReusesCheckWorker(), s.DB.ConnConfig().RuntimeParams, s.Opts.Conc.Isolation, func(params map[string]string) (*inject.Worker, error) {
		cfg := s.DB.ConnConfig()
		cfg.RuntimeParams = params
		w, err := inject.NewWorkerConfigured(cfg, s.Opts.ConfigurePool)
		if err != nil {
			return nil, err
		}
		s.SetUp.Watch(w)
		s.OnClose(w.Close)
		if err := s.addHandles(w); err != nil {
			return nil, err
		}
		if s.Opts.SQLOpen != nil {
			if err := s.useSQL(w, cfg); err != nil {
				return nil, err
			}
		}
		return w, nil
	})
	if err != nil {
		return err
	}
	s.Concurrent = &Concurrency{Workers: workers, Names: names}
	return nil
}

// useSQL replaces worker w's *sql.DB with one on the connector the options
// name, for the session cfg describes.
func (s *State[A]) useSQL(w *inject.Worker, cfg *pgx.ConnConfig) error {
	inner, err := handles.Connector(s.Opts.SQLOpen, s.Opts.SQLDriver, cfg)
	if err != nil {
		return err
	}
	w.UseConnector(inner)
	return nil
}

// FreshSessions starts a scenario on fresh sessions: every worker's
// sessions reset in place or ended, and those ended ended in PostgreSQL
// (sessions.Fresh).
func (s *State[A]) FreshSessions(ctx context.Context) error {
	return sessions.Fresh(ctx, s.DB.Pool(), s.DB.Name(), s.workers())
}

// EndSessions ends every worker's sessions, and waits until PostgreSQL has
// ended them (sessions.End).
func (s *State[A]) EndSessions(ctx context.Context) error {
	return sessions.End(ctx, s.DB.Pool(), s.DB.Name(), s.workers())
}

// workers are the check's workers, each once: its own, and the concurrent
// scenarios' when it plays them (which may include its own).
func (s *State[A]) workers() []*inject.Worker {
	workers := []*inject.Worker{s.Worker}
	if s.Concurrent != nil {
		for _, w := range s.Concurrent.Workers {
			if w != nil && !slices.Contains(workers, w) {
				workers = append(workers, w)
			}
		}
	}
	return workers
}

// ClearSessions ends the sessions on the check's database that the check
// did not open, left by the job of an earlier check on this database
// (recycled warm), and waits until PostgreSQL no longer lists them.
func (s *State[A]) ClearSessions(ctx context.Context) { sessions.Clear(ctx, s.DB.Pool(), s.DB.Name()) }
