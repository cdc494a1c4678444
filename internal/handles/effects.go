package handles

import (
	"net/http"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/baseurl"
	"github.com/twicekit/twicekit/internal/fakeserve"
)

// Effects are the effect handles of the attempts on one worker: the
// mailer, the webhook sink, the recorder behind a.Effect and the client
// behind a.HTTP, all recording in the check's log and asking the worker's
// owner whose a call is.
type Effects struct {
	Mailer   *effects.Mailer
	Webhooks *effects.WebhookSink
	Recorder *effects.Recorder
	HTTP     *http.Client
	BaseURLs *baseurl.Servers  // the worker's base-URL servers
	Fakes    *fakeserve.Worker // the worker's listeners
}

// NewEffects makes the effect handles of a worker whose calls ask g and
// record in log, its router mounting hosts beside p: newBaseURLs makes its
// base-URL servers on the router, serveFakes its fakes, and onClose is
// handed what to close with the check.
func NewEffects(log *effects.Log, g effects.Gate, p *effects.Provider, hosts []Host,
	newBaseURLs func(router http.RoundTripper, mounted []string) *baseurl.Servers,
	serveFakes func(effects.Gate) (*fakeserve.Worker, error), onClose func(func())) (*Effects, error) {
	router := effects.NewRouter(log, g, p)
	if err := Mount(router, hosts); err != nil {
		return nil, err
	}
	var err error
	h := &Effects{
		Mailer:   effects.NewMailer(log, g),
		Webhooks: effects.NewWebhookSink(log, g),
		Recorder: effects.NewRecorder(log, g),
		HTTP:     router.Client(),
	}
	h.BaseURLs = newBaseURLs(h.HTTP.Transport, router.Hosts())
	h.HTTP.Transport = baseurl.Transport{RT: h.HTTP.Transport, B: h.BaseURLs}
	onClose(h.BaseURLs.Close)
	onClose(h.HTTP.CloseIdleConnections)
	if h.Fakes, err = serveFakes(g); err != nil {
		return nil, err
	}
	return h, nil
}
