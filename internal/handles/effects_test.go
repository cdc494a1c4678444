package handles

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/baseurl"
	"github.com/twicekit/twicekit/internal/fakeserve"
	"github.com/twicekit/twicekit/internal/inject"
)

func TestNewEffectsMakesAWorkersHandles(t *testing.T) {
	log := effects.NewLog()
	g := Gate{Owner: inject.NewOwner(nil), Foreign: func(string) {}}
	p := effects.NewProvider(log, time.Now)
	defer p.Close()
	var closers []func()
	onClose := func(f func()) { closers = append(closers, f) }
	var mounted []string
	fakes := fakeserve.NewWorker(g, log, &fakeserve.Trouble{}, time.Second)
	h, err := NewEffects(log, g, p, []Host{{Name: "partner.example", Handler: http.NotFoundHandler()}},
		func(router http.RoundTripper, m []string) *baseurl.Servers {
			mounted = m
			return baseurl.New(router, m, baseurl.Refusing, func(error) {})
		},
		func(effects.Gate) (*fakeserve.Worker, error) { return fakes, nil }, onClose)
	if err != nil {
		t.Fatal(err)
	}
	if h.Mailer == nil || h.Webhooks == nil || h.Recorder == nil || h.HTTP == nil || h.BaseURLs == nil || h.Fakes != fakes {
		t.Errorf("handles: %+v", h)
	}
	if _, ok := h.HTTP.Transport.(baseurl.Transport); !ok {
		t.Errorf("a.HTTP's transport is %T, want the base URLs' names on its errors", h.HTTP.Transport)
	}
	if len(closers) != 2 || len(mounted) == 0 {
		t.Errorf("%d closers, mounted %q", len(closers), mounted)
	}
	for _, f := range closers {
		f()
	}
	fakes.Close()

	refused := errors.New("no fakes")
	if _, err := NewEffects(log, g, p, nil, func(router http.RoundTripper, m []string) *baseurl.Servers {
		return baseurl.New(router, m, baseurl.Refusing, func(error) {})
	}, func(effects.Gate) (*fakeserve.Worker, error) { return nil, refused }, func(f func()) { f() }); !errors.Is(err, refused) {
		t.Errorf("the fakes' error: %v", err)
	}
}
