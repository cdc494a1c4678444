package twice

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/internal/sessions"
)

// infrastructureError is an error of the machinery a check runs on (the
// PostgreSQL server went away, it refused a connection), never the job's:
// the check proves nothing and keeps no database for inspection.
type infrastructureError struct{ err error }

func (e *infrastructureError) Error() string { return e.err.Error() }
func (e *infrastructureError) Unwrap() error { return e.err }

func isInfrastructure(err error) bool {
	var ie *infrastructureError
	return errors.As(err, &ie)
}

// goneCause says why err looks like a server that went away, or "" when it
// does not (internal/sessions).
var goneCause = sessions.GoneCause

// serverWentAway returns the check's error when the PostgreSQL server went
// away during the check: the check's own work failed as a lost server
// fails, or an attempt did and a fresh connection to the server fails too
// (the check ends sessions on purpose, so an attempt's 57P01 alone says
// nothing).
func (c *checker) serverWentAway(ctx context.Context, rep *Report) error {
	if cause := goneCause(rep.Err); cause != "" {
		return wentAway(cause, rep.Err)
	}
	runs := rep.Scenarios
	if rep.Reference != nil {
		runs = append([]*ScenarioRun{rep.Reference}, runs...)
	}
	for _, sr := range runs {
		for _, a := range sr.Attempts {
			cause := goneCause(a.Err)
			if cause == "" {
				continue
			}
			if err := c.serverAnswers(ctx); err != nil {
				return wentAway(cause, fmt.Errorf("%s of scenario %s: %w; a new connection: %v", attemptName(a), sr.Scenario.Token(), a.Err, err))
			}
			return nil
		}
	}
	return nil
}

// serverAnswers opens a new connection to the check's database.
func (c *checker) serverAnswers(ctx context.Context) error {
	return sessions.ServerAnswers(ctx, c.db.ConnConfig())
}

func wentAway(cause string, err error) error {
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
