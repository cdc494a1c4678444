package handles

import (
	"context"
	"fmt"
	"net/http"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
)

// Gate makes effect calls points of the attempt they belong to. Each worker
// has effect handles of their own, whose gate asks the worker's owner, as
// its statements do: a call carrying an attempt's context is that
// attempt's; a call carrying none (context.Background(), a request made
// with http.NewRequest) is the attempt running on the worker; between
// attempts it is refused and reported as foreign.
type Gate struct {
	Owner *inject.Owner // nil: only the context says whose a call is
	// Foreign records the label of a call refused as foreign.
	Foreign func(label string)
	// Origin is the job and the number of the attempt of run: the one ctx
	// carries when it is run's, else the one the check started run for
	// (ok false once it ended).
	Origin func(ctx context.Context, run *inject.Run) (jobID string, attempt int, ok bool)
}

// Before makes the call a point of its attempt and says where it was made.
func (g Gate) Before(ctx context.Context, call effects.Call) (effects.Origin, error) {
	run := g.Owner.Of(ctx)
	if run == nil {
		g.Foreign(call.Label)
		return effects.Origin{}, faults.ErrForeignContext
	}
	s, err := run.Enter(ctx, faults.Effect, inject.Label(call.Label))
	if err != nil {
		return effects.Origin{}, err
	}
	jobID, attempt, ok := g.Origin(ctx, run)
	if !ok {
		return effects.Origin{}, faults.ErrFinished // (ended between the owner's answer and here)
	}
	return effects.Origin{JobID: jobID, Attempt: attempt, Point: s.Index}, nil
}

// After tells the call's attempt that the call was applied.
func (g Gate) After(ctx context.Context, _ effects.Call) error {
	if run := g.Owner.Of(ctx); run != nil {
		return run.Applied(ctx)
	}
	return nil
}

// Host is a fake of a partner's API mounted under its host (twice.HTTPHost).
type Host struct {
	Name    string
	Handler http.Handler
}

// Mount mounts hosts on router.
func Mount(router *effects.Router, hosts []Host) error {
	for _, m := range hosts {
		if err := router.Mount(m.Name, m.Handler); err != nil {
			return fmt.Errorf("twice: HTTPHost: %w", err)
		}
	}
	return nil
}
