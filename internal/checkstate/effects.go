package checkstate

import (
	"net/http"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/attempt"
	"github.com/twicekit/twicekit/internal/baseurl"
	"github.com/twicekit/twicekit/internal/checkrun"
	"github.com/twicekit/twicekit/internal/fakeserve"
	"github.com/twicekit/twicekit/internal/handles"
	"github.com/twicekit/twicekit/internal/inject"
)

// wireEffects builds the effect fakes: one log, the payment provider on the
// check's clock, the router behind http.DefaultTransport with the mounted
// hosts, and the effect handles of the check's worker (addHandles: every
// worker has its own, recording in the same log).
func (s *State[A]) wireEffects() error {
	g := s.gate(s.Worker.Owner)
	s.Provider = effects.NewProvider(s.Log, s.Now)
	s.Router = effects.NewRouter(s.Log, g, s.Provider)
	s.ThroughDefault = s.Router.ThroughDefault(handles.Loopback)
	s.OnClose(s.Provider.Close)
	if err := handles.Mount(s.Router, s.Opts.Effects.Hosts); err != nil {
		return err
	}
	return s.addHandles(s.Worker)
}

// resetEffects gives every scenario a fresh world: the provider and the
// mounted fakes forget what they saw.
func (s *State[A]) resetEffects() {
	s.Provider.Reset()
	s.Router.Reset()
}

// addHandles makes the effect handles of worker w (wireEffects and
// ConcurrentWorkers call it for each worker they make).
func (s *State[A]) addHandles(w *inject.Worker) error {
	g := s.gate(w.Owner)
	h, err := handles.NewEffects(s.Log, g, s.Provider, s.Opts.Effects.Hosts, s.newBaseURLs, s.serveFakes, s.OnClose)
	if err != nil {
		return err
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.handles == nil {
		s.handles = map[*inject.Worker]*handles.Effects{}
	}
	s.handles[w] = h
	return nil
}

// HandlesOf returns the effect handles of worker w.
func (s *State[A]) HandlesOf(w *inject.Worker) *handles.Effects {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.handles[w]
}

// newBaseURLs returns the base-URL servers of a worker whose router
// (serving mounted) is router. A host no fake serves is the check's error,
// as a fake's trouble is: the report carries it instead of findings.
func (s *State[A]) newBaseURLs(router http.RoundTripper, mounted []string) *baseurl.Servers {
	return baseurl.New(router, mounted, baseurl.Refusing, func(err error) { s.FakeTrouble.Add(err.Error()) })
}

// NewFakeServers makes a worker's fakes, whose serve functions get
// attempt.GraceAfterCancel to return once the check closed their
// connections.
func NewFakeServers(g effects.Gate, log *effects.Log, trouble *fakeserve.Trouble) *fakeserve.Worker {
	return fakeserve.NewWorker(g, log, trouble, attempt.GraceAfterCancel)
}

// serveFakes makes a worker's fakes, the SMTP server and one listener per
// ServeFake option, whose calls ask g (the worker's gate) and record in the
// check's log; they close with the check.
func (s *State[A]) serveFakes(g effects.Gate) (*fakeserve.Worker, error) {
	f := NewFakeServers(g, s.Log, s.FakeTrouble)
	s.OnClose(f.Close)
	if err := f.Serve(s.Opts.Effects.Fakes, checkrun.Usage); err != nil {
		return nil, err
	}
	return f, nil
}
