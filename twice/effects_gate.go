package twice

import (
	"context"

	"github.com/twicekit/twicekit/internal/handles"
	"github.com/twicekit/twicekit/internal/inject"
)

// gate makes effect calls points of the attempt they belong to: it asks
// owner, the worker's, whose a call is (handles.Gate; nil: only the
// context says).
func (c *checker) gate(owner *inject.Owner) handles.Gate {
	return handles.Gate{Owner: owner, Foreign: c.ForeignCall, Origin: c.originOf}
}

// originOf is the job and the number of the attempt of run (attemptOfRun).
func (c *checker) originOf(ctx context.Context, run *inject.Run) (string, int, bool) {
	if a := c.attemptOfRun(ctx, run); a != nil {
		return a.JobID, a.Number, true
	}
	return "", 0, false
}

// attemptOfRun is the attempt of run: the one ctx carries when it is run's,
// else the one the check started run for (nil once it ended).
func (c *checker) attemptOfRun(ctx context.Context, run *inject.Run) *Attempt {
	if inject.FromContext(ctx) == run {
		if a := attemptOf(ctx); a != nil {
			return a
		}
	}
	return c.AttemptOf(run)
}
