package twice

import (
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/sessions"
)

// A slow job is not a hung one: an attempt past AttemptTimeout whose latest
// statement is still running in PostgreSQL is slow, and the report says how
// to give it more time (internal/sessions).

// runningInPostgres reports whether the latest point of the attempt is a
// statement still running in PostgreSQL (sessions.StillRunning).
func (ra *runningAttempt) runningInPostgres() bool {
	steps := ra.run.Steps()
	if len(steps) == 0 {
		return false
	}
	last := steps[len(steps)-1]
	if last.Kind != faults.SQL {
		return false
	}
	return sessions.StillRunning(ra.c.db.Pool(), last.Backend)
}
