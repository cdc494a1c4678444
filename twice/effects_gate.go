package twice

import (
	"context"
	"fmt"
	"net/http"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/baseurl"
	"github.com/twicekit/twicekit/internal/inject"
)

// gate makes effect calls points of the attempt they belong to. Each worker
// has effect handles of their own (effectHandles), whose gate asks the
// worker's owner, as its statements do: a call carrying an attempt's
// context is that attempt's; a call carrying none (context.Background(), a
// request made with http.NewRequest) is the attempt running on the worker;
// between attempts it is refused and reported as foreign.
type gate struct {
	c     *checker
	owner *inject.Owner // nil: only the context says whose a call is
}

func (g gate) Before(ctx context.Context, call effects.Call) (effects.Origin, error) {
	run := g.owner.Of(ctx)
	if run == nil {
		g.c.mu.Lock()
		g.c.foreign = append(g.c.foreign, call.Label)
		g.c.mu.Unlock()
		return effects.Origin{}, faults.ErrForeignContext
	}
	s, err := run.Enter(ctx, faults.Effect, inject.Label(call.Label))
	if err != nil {
		return effects.Origin{}, err
	}
	a := g.c.attemptOfRun(ctx, run)
	if a == nil {
		return effects.Origin{}, faults.ErrFinished // (ended between the owner's answer and here)
	}
	return effects.Origin{JobID: a.JobID, Attempt: a.Number, Point: s.Index}, nil
}

func (g gate) After(ctx context.Context, _ effects.Call) error {
	if run := g.owner.Of(ctx); run != nil {
		return run.Applied(ctx)
	}
	return nil
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

// effectHandles are the effect handles of the attempts on one worker: the
// mailer, the webhook sink, the recorder behind a.Effect and the client
// behind a.HTTP, all recording in the check's log and asking the worker's
// owner whose a call is.
type effectHandles struct {
	mailer   *effects.Mailer
	webhooks *effects.WebhookSink
	recorder *effects.Recorder
	http     *http.Client
	baseURLs *baseURLs    // baseurl.go
	fakes    *fakeServers // the worker's listeners: fakeserver.go
}

// addHandles makes the effect handles of worker w (wireEffects and
// concurrentWorkers call it for each worker they make).
func (c *checker) addHandles(w *inject.Worker) error {
	g := gate{c: c, owner: w.Owner}
	router := effects.NewRouter(c.log, g, c.provider)
	for _, m := range c.cfg.effects.hosts {
		if err := router.Mount(m.host, m.handler); err != nil {
			return fmt.Errorf("twice: HTTPHost: %w", err)
		}
	}
	var err error
	h := &effectHandles{
		mailer:   effects.NewMailer(c.log, g),
		webhooks: effects.NewWebhookSink(c.log, g),
		recorder: effects.NewRecorder(c.log, g),
		http:     router.Client(),
	}
	h.baseURLs = newBaseURLs(c, h.http.Transport, router.Hosts())
	h.http.Transport = baseurl.Transport{RT: h.http.Transport, B: h.baseURLs}
	c.onClose(h.baseURLs.Close)
	c.onClose(h.http.CloseIdleConnections)
	if h.fakes, err = c.serveFakes(g); err != nil {
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
