package twice

import (
	"context"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
)

// gate makes effect calls points of the attempt in their context.
type gate struct{ c *checker }

func (g gate) Before(ctx context.Context, call effects.Call) (effects.Origin, error) {
	run := inject.FromContext(ctx)
	a := attemptOf(ctx)
	if run == nil || a == nil {
		g.c.mu.Lock()
		g.c.foreign = append(g.c.foreign, call.Label)
		g.c.mu.Unlock()
		return effects.Origin{}, faults.ErrForeignContext
	}
	s, err := run.Enter(ctx, faults.Effect, inject.Label(call.Label))
	if err != nil {
		return effects.Origin{}, err
	}
	return effects.Origin{JobID: a.JobID, Attempt: a.Number, Point: s.Index}, nil
}

func (g gate) After(ctx context.Context, _ effects.Call) error {
	if run := inject.FromContext(ctx); run != nil {
		return run.Applied(ctx)
	}
	return nil
}
