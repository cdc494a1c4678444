package checkrun

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessions"
	"github.com/twicekit/twicekit/pgfixture"
)

// Open gives a check of workers workers its database, cloned from schema's
// template on srv (the shared server when srv is nil), and its worker, its
// sessions named sessions.WorkerName and its pool configured (configure).
// Before it makes anything it reserves, with the database, every
// connection the workers may open (waiting while other checks hold them),
// for owner; the reservation is given back by release. A database of a
// test (label not "") is labelled so that a kept database replaces the one
// the test kept before.
func Open(ctx context.Context, srv *pgfixture.Server, schema pgfixture.Schema, workers int, owner, label string, configure func(*pgxpool.Config)) (_ *pgfixture.Server, _ *pgfixture.DB, _ *inject.Worker, release func(), _ error) {
	if srv == nil {
		var err error
		if srv, err = pgfixture.Shared(ctx); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("twice: no PostgreSQL to run the check on: %w", err)
		}
	}
	db, release, err := srv.CreateDBReserving(ctx, schema, workers*inject.MaxConnsPerWorker, owner)
	if err := CreateErr(ctx, err, workers); err != nil {
		return nil, nil, nil, nil, err
	}
	if label != "" {
		db.Label(label)
	}
	worker, err := inject.NewWorkerConfigured(sessions.WorkerConfig(db.ConnConfig()), configure)
	if err != nil {
		release()
		_ = db.Close(ctx, false)
		return nil, nil, nil, nil, err
	}
	return srv, db, worker, release, nil
}

// NameUnseen plays the clean run again (again), at most tries times, until
// it sees the session of a job whose clean run changed the database with
// no statement seen: a connection opened and closed between two looks of
// the watch escapes it now and then, and the report should name it every
// time. It returns the sessions seen, nil when no run saw one or a run
// failed. The verdict does not depend on it.
func NameUnseen[S any](tries int, again func() ([]S, error)) []S {
	for range tries {
		ss, err := again()
		if err != nil {
			return nil
		}
		if len(ss) > 0 {
			return ss
		}
	}
	return nil
}
