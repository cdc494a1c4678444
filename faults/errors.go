package faults

import "github.com/twicekit/twicekit/internal/inject"

// What a refused or struck call returns. Test them with errors.Is; the values
// are the engine's own, so errors.Is matches whichever package a caller
// names.
var (
	// ErrCrashed is what every call of an attempt returns once the check
	// crashed it: nothing after the crash reaches the world.
	ErrCrashed = inject.ErrCrashed
	// ErrReplyLost is what a job gets when the check loses the reply of an
	// effect call that the provider applied (a timeout, a 5xx from a proxy).
	ErrReplyLost = inject.ErrReplyLost
	// ErrForeignContext is returned when a statement or effect call carries
	// a context that belongs to no attempt.
	ErrForeignContext = inject.ErrForeignContext
	// ErrFinished refuses a call made with the context of an attempt whose
	// job function had already returned (for example database/sql rolling
	// back a transaction the job left open).
	ErrFinished = inject.ErrFinished
)
