package serverfacts

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/internal/sessions"
)

// infrastructureError is an error of the machinery a check runs on (the
// PostgreSQL server went away, it refused a connection), never the job's:
// the check proves nothing and keeps no database for inspection.
type infrastructureError struct{ err error }

func (e *infrastructureError) Error() string { return e.err.Error() }
func (e *infrastructureError) Unwrap() error { return e.err }

// Infrastructure marks err as an error of the machinery a check runs on.
func Infrastructure(err error) error { return &infrastructureError{err} }

// IsInfrastructure reports whether err is marked by Infrastructure.
func IsInfrastructure(err error) bool {
	var ie *infrastructureError
	return errors.As(err, &ie)
}

// WentAwayDuring returns the check's error when the PostgreSQL server went
// away during the check: the check's own work failed as a lost server
// fails (checkErr), or an attempt did and a fresh connection to the server
// (cfg) fails too (the check ends sessions on purpose, so an attempt's
// 57P01 alone says nothing).
func WentAwayDuring(ctx context.Context, checkErr error, attempts []Attempt, cfg *pgx.ConnConfig) error {
	if cause := sessions.GoneCause(checkErr); cause != "" {
		return WentAway(cause, checkErr)
	}
	for _, a := range attempts {
		cause := sessions.GoneCause(a.Err)
		if cause == "" {
			continue
		}
		if err := sessions.ServerAnswers(ctx, cfg); err != nil {
			return WentAway(cause, fmt.Errorf("%s of scenario %s: %w; a new connection: %v", a.Name, a.Scenario, a.Err, err))
		}
		return nil
	}
	return nil
}

// WentAway is the check's error for a server that went away, cause being
// why err looks so (sessions.GoneCause).
func WentAway(cause string, err error) error {
	return &infrastructureError{&wentAwayError{cause: cause, err: err}}
}

// wentAwayError is the check's words for a server that went away; what
// failed is told without the "internal error" its first words had.
type wentAwayError struct {
	cause string
	err   error
}

func (e *wentAwayError) Error() string {
	failed := strings.ReplaceAll(e.err.Error(), "twice: internal error: ", "")
	return fmt.Sprintf("twice: the PostgreSQL server went away during the check (%s): the check proves nothing about the job; "+
		"keep the server up for the whole test (its log says why it stopped: a restart, a crash, the OOM killer, a shutdown), then run the test again\n(what failed: %s)", e.cause, failed)
}

func (e *wentAwayError) Unwrap() error { return e.err }
