package faults

import (
	"context"

	"github.com/twicekit/twicekit/internal/inject"
)

// Point is an explicit point in a job: a no-op outside a check. Inside one it
// is a place where the attempt may be crashed or paused; it then returns an
// error wrapping [ErrCrashed] and the job should stop (anything it still
// tries is refused anyway).
func Point(ctx context.Context, name string) error { return inject.Point(ctx, name) }

// Step is a point an attempt reached: its 1-based index within the attempt,
// its kind and a short, deterministic label (SQL with whitespace folded and
// shortened, the effect's description, or the explicit point's name). Its
// Backend is the PostgreSQL backend PID that ran an SQL point (0 otherwise);
// it is never printed. A check's results list an attempt's points as Steps.
type Step = inject.Step

// Kind says what a point is: [SQL], [Effect] or [Explicit].
type Kind = inject.Kind

// The kinds of points.
const (
	// SQL is a statement sent through the attempt's database handles.
	SQL = inject.SQL
	// Effect is a call to an external effect client (mailer, provider, webhook).
	Effect = inject.Effect
	// Explicit is a call to [Point].
	Explicit = inject.Explicit
)
