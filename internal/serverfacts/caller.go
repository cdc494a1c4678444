package serverfacts

import (
	"context"
	"errors"
	"fmt"
)

// The context the caller passes to Check bounds the whole check. When it
// ends (cancelled, or past its deadline), wherever the check is (finding
// the server, building the template, playing a scenario, comparing), what
// failed after it failed because of it: the check says that the caller's
// context ended, not that there is no PostgreSQL, that the job broke a
// promise or that the harness failed, and keeps no database.

// callerEndedError is the check's error when the caller's context ended.
type callerEndedError struct{ cause error }

func (e *callerEndedError) Error() string {
	return fmt.Sprintf("twice: the caller's context ended: %v; the check stopped there and proves nothing about the job: "+
		"give twice.Check a context that outlives the check (a deadline long enough for every scenario)", e.cause)
}

func (e *callerEndedError) Unwrap() error { return e.cause }

// CallerEnded returns the check's error when ctx has ended, else nil.
func CallerEnded(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	return &callerEndedError{cause: context.Cause(ctx)}
}

// IsCallerEnded reports whether err is CallerEnded's.
func IsCallerEnded(err error) bool {
	var ce *callerEndedError
	return errors.As(err, &ce)
}
