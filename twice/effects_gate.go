package twice

import (
	"context"
	"net/http"

	"github.com/twicekit/twicekit/internal/handles"
	"github.com/twicekit/twicekit/internal/inject"
)

// gate makes effect calls points of the attempt they belong to: it asks
// owner, the worker's, whose a call is (handles.Gate; nil: only the
// context says).
func (c *checker) gate(owner *inject.Owner) handles.Gate {
	return handles.Gate{Owner: owner, Foreign: c.foreignCall, Origin: c.originOf}
}

// foreignCall records an effect call made with a context that is not an
// attempt's while no attempt ran on its worker.
func (c *checker) foreignCall(label string) {
	c.mu.Lock()
	c.foreign = append(c.foreign, label)
	c.mu.Unlock()
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
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attempts[run]
}

// effectHandles are the effect handles of the attempts on one worker
// (internal/handles).
type effectHandles = handles.Effects

// addHandles makes the effect handles of worker w (wireEffects and
// concurrentWorkers call it for each worker they make).
func (c *checker) addHandles(w *inject.Worker) error {
	g := c.gate(w.Owner)
	h, err := handles.NewEffects(c.log, g, c.provider, c.cfg.Effects.Hosts, func(router http.RoundTripper, mounted []string) *baseURLs {
		return newBaseURLs(c, router, mounted)
	}, c.serveFakes, c.onClose)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handles == nil {
		c.handles = map[*inject.Worker]*effectHandles{}
	}
	c.handles[w] = h
	return nil
}

// handlesOf returns the effect handles of worker w.
func (c *checker) handlesOf(w *inject.Worker) *effectHandles {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handles[w]
}
