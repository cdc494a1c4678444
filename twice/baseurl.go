package twice

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/inject"
)

// BaseURL returns the base URL, "http://127.0.0.1:<port>", of an HTTP
// server the check owns for host on the worker the attempt runs on, for an
// app that builds its own http.Client (its own http.Transport) from a
// configured base URL. host is a host mounted with HTTPHost
// ("partner.example"), or the payment provider's ("payments.twice.test";
// a.Payments itself is taken too).
//
// Every request the server gets is handed to the attempt's router as a
// request to host: a point of the attempt and an effect, exactly as through
// a.HTTP. It is recorded and labelled under host, never under the loopback
// port ("http POST partner.example/v1/charges"), and a handler's
// "Idempotent-Replayed: true" answer is not recorded again. When the
// attempt crashes after the request was applied, or its reply is lost, the
// server closes the connection with no response, so the app's client gets
// an error, as from a reply lost on the network. The requests carry no
// attempt's context: they are the attempt running on that worker, as a
// call on its handles without a context is; each worker of the concurrent
// scenarios has servers of its own.
//
// A host nobody mounted fails the check with an error naming HTTPHost; the
// URL returned then is one that refuses every connection. The servers
// start at the first ask and close with the check. An error the job
// returns that names a server's address names host instead, so reports
// are the same on every run.
func (a *Attempt) BaseURL(host string) string {
	if a.baseURLs == nil {
		return refusingBaseURL // an attempt the check did not make
	}
	return a.baseURLs.url(host)
}

// refusingBaseURL refuses every connection (refusedAddr: fakeserver.go) and
// never reaches the network.
const refusingBaseURL = "http://" + refusedAddr

// providerHost is the payment provider's host in a.Payments.
var providerHost = strings.TrimPrefix(effects.ProviderURL, "http://")

// baseURLs are the servers a.BaseURL hands out on one worker: one per
// host, each handing its requests to the worker's router.
type baseURLs struct {
	c      *checker
	router http.RoundTripper // the worker's router: a.HTTP's transport
	mounts map[string]bool   // the hosts the router serves, lowercased

	mu      sync.Mutex
	servers map[string]*baseURLServer // by host
	hosts   map[string]string         // host by server address ("127.0.0.1:<port>")
	closed  bool
}

type baseURLServer struct {
	url    string
	server *http.Server
	served chan struct{} // closed when Serve returned
}

// newBaseURLs returns the base-URL servers of a worker whose router
// (serving mounted) is router.
func newBaseURLs(c *checker, router http.RoundTripper, mounted []string) *baseURLs {
	b := &baseURLs{c: c, router: router, mounts: map[string]bool{providerHost: true},
		servers: map[string]*baseURLServer{}, hosts: map[string]string{}}
	for _, h := range mounted {
		b.mounts[strings.ToLower(h)] = true
	}
	return b
}

// url is BaseURL.
func (b *baseURLs) url(host string) string {
	h, err := b.served(host)
	if err != nil {
		b.fail(err)
		return refusingBaseURL
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.servers[h]; s != nil {
		return s.url
	}
	if b.closed {
		return refusingBaseURL
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.fail(fmt.Errorf("twice: a.BaseURL(%q): listening on 127.0.0.1: %w", host, err))
		return refusingBaseURL
	}
	s := &baseURLServer{
		url: "http://" + ln.Addr().String(),
		server: &http.Server{
			Handler:  b.handler(h),
			ErrorLog: log.New(io.Discard, "", 0), // a connection closed with no response is the point, not news
		},
		served: make(chan struct{}),
	}
	go func() {
		defer close(s.served)
		_ = s.server.Serve(ln) // http.ErrServerClosed, once close closes it
	}()
	b.servers[h] = s
	b.hosts[ln.Addr().String()] = h
	return s.url
}

// served returns the host a.BaseURL(host) serves, lowercased, or an error
// that says what to do.
func (b *baseURLs) served(host string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(host))
	if rest, ok := strings.CutPrefix(h, "http://"); ok && h == strings.ToLower(effects.ProviderURL) {
		h = rest // a.Payments
	}
	switch {
	case h == "":
		return "", usage(errors.New(`twice: a.BaseURL(""): give the host of a fake, such as "partner.example" (mounted with twice.HTTPHost) or "payments.twice.test"`))
	case strings.ContainsAny(h, "/ ") || strings.Contains(h, "://"):
		return "", usage(fmt.Errorf(`twice: a.BaseURL(%q): give the host alone, such as "partner.example", without scheme or path`, host))
	case b.mounts[h]:
		return h, nil
	}
	if name, _, err := net.SplitHostPort(h); err == nil && b.mounts[name] && name != providerHost {
		return h, nil // the router serves host:port by its host name
	}
	return "", usage(fmt.Errorf("twice: a.BaseURL(%q): no fake serves host %q: mount a fake of that API with twice.HTTPHost(%q, handler), "+
		"or ask for the payment provider's host, %q", host, h, h, providerHost))
}

// fail makes err the check's error, as a fake's trouble is: the report
// carries it instead of findings (fakeserver.go).
func (b *baseURLs) fail(err error) { b.c.fakeTrouble.add(err.Error()) }

// handler hands each request to the worker's router as a request to host.
// When the router gives no response (the attempt crashed, its reply was
// lost, or no attempt runs on the worker), the connection is closed with
// no response.
func (b *baseURLs) handler(host string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.URL.Scheme, out.URL.Host, out.Host = "http", host, host
		resp, err := b.router.RoundTrip(out)
		if err != nil {
			panic(http.ErrAbortHandler) // net/http closes the connection, writing nothing
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	})
}

// named returns req as a request to the host of the server it is
// addressed to, when it is addressed to one of these servers: a job that
// sends a request for a base URL through a.HTTP or http.DefaultTransport
// reaches the router once, under the host's name.
func (b *baseURLs) named(req *http.Request) *http.Request {
	if b == nil || req.URL == nil || req.URL.Scheme != "http" {
		return req
	}
	b.mu.Lock()
	host, ok := b.hosts[req.URL.Host]
	b.mu.Unlock()
	if !ok {
		return req
	}
	out := req.Clone(req.Context())
	out.URL.Host, out.Host = host, host
	return out
}

var loopbackAddress = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)

// nameIn replaces in text each server's address with its host.
func (b *baseURLs) nameIn(text string) string {
	if b == nil || !strings.Contains(text, "127.0.0.1:") {
		return text
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return loopbackAddress.ReplaceAllStringFunc(text, func(addr string) string {
		if h, ok := b.hosts[addr]; ok {
			return h
		}
		return addr
	})
}

// namedError is an error whose text names hosts where the job's error
// named base-URL servers; it unwraps to the job's error.
type namedError struct {
	text string
	err  error
}

func (e namedError) Error() string { return e.text }
func (e namedError) Unwrap() error { return e.err }

// nameErr returns err with nameIn applied to its text.
func (b *baseURLs) nameErr(err error) error {
	if err == nil {
		return nil
	}
	if text := b.nameIn(err.Error()); text != err.Error() {
		return namedError{text: text, err: err}
	}
	return err
}

// close closes every server and waits until each stopped serving.
func (b *baseURLs) close() {
	b.mu.Lock()
	b.closed = true
	servers := b.servers
	b.mu.Unlock()
	for _, s := range servers {
		_ = s.server.Close()
		<-s.served
	}
}

// namingTransport is a.HTTP's transport: a request for a base URL goes to
// the router under its host's name.
type namingTransport struct {
	rt http.RoundTripper
	b  *baseURLs
}

func (t namingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.rt.RoundTrip(t.b.named(req))
}

// CloseIdleConnections closes the router's idle connections to the provider.
func (t namingTransport) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// baseURLsOf is the base-URL servers of worker w.
func (c *checker) baseURLsOf(w *inject.Worker) *baseURLs {
	if h := c.handlesOf(w); h != nil {
		return h.baseURLs
	}
	return nil
}
