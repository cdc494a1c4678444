package checkrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/serverfacts"
	"github.com/twicekit/twicekit/internal/sessions"
	"github.com/twicekit/twicekit/internal/wall"
	"github.com/twicekit/twicekit/pgfixture"
)

// Validate is the check's error when the job or the options cannot make a
// check: a job without Run, deliveries or an attempt timeout out of range.
func Validate(hasRun bool, maxDeliveries int, attemptTimeout time.Duration) error {
	if !hasRun {
		return errors.New("twice: the job has no Run function: set Job.Run to the function a worker calls for one delivery")
	}
	if maxDeliveries < 1 || attemptTimeout <= 0 {
		return fmt.Errorf("twice: MaxDeliveries must be at least 1 and AttemptTimeout positive (got %d, %s)", maxDeliveries, attemptTimeout)
	}
	return nil
}

// SetUpErr is the check's error when it could not set up (err), or the
// caller's when the caller's context ended.
func SetUpErr(ctx context.Context, err error) error {
	if ended := serverfacts.CallerEnded(ctx); ended != nil {
		return ended
	}
	return err
}

// CreateErr is the check's error when the server could not give it its
// database, for a check of workers workers: too few connections on the
// server, refused ones, the caller's context ended, a schema that does not
// set up; nil when err is.
func CreateErr(ctx context.Context, err error, workers int) error {
	switch {
	case errors.Is(err, pgfixture.ErrConnectionLimit):
		hint := ""
		if workers > 1 {
			hint = fmt.Sprintf("; or, where the server cannot change, twice.WithoutConcurrency(reason) makes this check need %d",
				inject.MaxConnsPerWorker+pgfixture.ControlPoolConns)
		}
		return fmt.Errorf("twice: not enough connections on the server for this check: %w%s", err, hint)
	case errors.Is(err, pgfixture.ErrTooManyClients):
		return fmt.Errorf("twice: the server refused the check's connections: %w", err)
	case err != nil && ctx.Err() != nil:
		return serverfacts.CallerEnded(ctx)
	case err != nil:
		return fmt.Errorf("twice: the job's schema could not be set up: %w", err)
	}
	return nil
}

// Keep reports whether a check keeps its database: it failed and the
// options ask for it. Under rapid, which replays many failing cases
// (picked), it keeps none; a mistake in the options (IsUsage) is not the
// job's: nothing to inspect. Nor does a server that refused or lost it:
// the check's database would only fill the server further.
func Keep(failed, keepFailed, picked bool, err error) bool {
	return failed && keepFailed && !picked && !IsUsage(err) && !serverfacts.IsInfrastructure(err) && !serverfacts.IsCallerEnded(err)
}

// KeptNote is what to know about a kept database's URL on a server of
// mode: in local and container mode the server, and the database, end with
// the test binary.
func KeptNote(mode string) string {
	what := map[string]string{
		"local":     "in local mode the cluster is removed when the binary ends",
		"container": "in container mode the container is removed when the binary ends",
	}[mode]
	if what == "" {
		return ""
	}
	return " (this URL dies with the test binary: " + what + "; " +
		"to look at the database afterwards, run the test again with TWICE_DATABASE_URL set to a server of yours)"
}

// CloseErr is the check's error when closing its database failed: the
// server went away, or an internal error.
func CloseErr(err error) error {
	if cause := sessions.GoneCause(err); cause != "" {
		return serverfacts.WentAway(cause, err)
	}
	return fmt.Errorf("twice: internal error: closing the check's database: %w", err)
}

// Concurrency is the report's words for the concurrent scenarios when the
// wall budget left them all out (wallNone, off its words) or cut the
// check short; ok is false when it did neither.
func Concurrency(wallNone bool, off string, w *wall.Clock) (string, bool) {
	if wallNone {
		return "not checked: " + off, true
	} else if w != nil && w.Shortened() {
		return "cut by the wall budget (" + w.Budget().String() + ")", true
	}
	return "", false
}

// Facts are what the check's error after its run is made of, each nil
// when it does not apply.
type Facts struct {
	// Refused is PostgreSQL refusing an attempt's connection
	// (serverfacts.Refused).
	Refused func() error
	// Gone is the server gone away during the check, given its error so
	// far (serverfacts.WentAwayDuring).
	Gone func() error
	// ClosedPool is the job closing its worker's pool
	// (serverfacts.ClosedPoolByJob).
	ClosedPool func() error
}

// Settle makes the check's error, err, after its run, and drops its
// findings when there is one: a check that could not connect proves
// nothing; a server that went away, a pool the job closed (the job's
// database shows nothing of it: keep none) or the caller's context ended
// (what failed after it failed because of it) take the check's place.
func Settle[F any](ctx context.Context, err *error, findings *[]F, f Facts) {
	if e := f.Refused(); e != nil && *err == nil {
		*err, *findings = serverfacts.Infrastructure(e), nil
	}
	if e := f.Gone(); e != nil {
		*err, *findings = e, nil
	}
	if e := f.ClosedPool(); e != nil && !serverfacts.IsInfrastructure(*err) {
		*err, *findings = Usage(e), nil
	}
	if e := serverfacts.CallerEnded(ctx); e != nil {
		*err, *findings = e, nil
	}
}
