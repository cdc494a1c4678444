// Package baseurl serves the base URLs an attempt asks for on one worker:
// an HTTP server per host on 127.0.0.1, handing each request to the
// worker's router as a request to that host (Servers). A request sent to
// such a URL through the router's own transport is renamed to its host
// first (Transport), and a job's error or panic that names a server's
// address names its host instead, so reports are the same on every run.
//
// twice keeps Attempt.BaseURL and the worker's handles, and makes a host
// that no fake serves the check's error.
package baseurl

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
)

// providerHost is the payment provider's host in a.Payments.
var providerHost = strings.TrimPrefix(effects.ProviderURL, "http://")

// Servers are the servers a.BaseURL hands out on one worker: one per
// host, each handing its requests to the worker's router.
type Servers struct {
	fail     func(error)       // makes an error the check's error, as a fake's trouble is
	refusing string            // a URL that refuses every connection
	router   http.RoundTripper // the worker's router: a.HTTP's transport
	mounts   map[string]bool   // the hosts the router serves, lowercased

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

// New returns the base-URL servers of a worker whose router (serving
// mounted) is router. fail makes an error the check's error; refusing is
// the URL handed out when there is no server.
func New(router http.RoundTripper, mounted []string, refusing string, fail func(error)) *Servers {
	b := &Servers{fail: fail, refusing: refusing, router: router, mounts: map[string]bool{providerHost: true},
		servers: map[string]*baseURLServer{}, hosts: map[string]string{}}
	for _, h := range mounted {
		b.mounts[strings.ToLower(h)] = true
	}
	return b
}

// Refusing is a URL that refuses every connection (127.0.0.1:0) and never
// reaches the network.
const Refusing = "http://127.0.0.1:0"

// URL is Attempt.BaseURL: the base URL of the server for host, started
// at the first ask. A nil *Servers (an attempt the check did not make)
// hands out Refusing.
func (b *Servers) URL(host string) string {
	if b == nil {
		return Refusing
	}
	h, err := b.served(host)
	if err != nil {
		b.fail(err)
		return b.refusing
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.servers[h]; s != nil {
		return s.url
	}
	if b.closed {
		return b.refusing
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.fail(fmt.Errorf("twice: a.BaseURL(%q): listening on 127.0.0.1: %w", host, err))
		return b.refusing
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
func (b *Servers) served(host string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(host))
	if rest, ok := strings.CutPrefix(h, "http://"); ok && h == strings.ToLower(effects.ProviderURL) {
		h = rest // a.Payments
	}
	switch {
	case h == "":
		return "", errors.New(`twice: a.BaseURL(""): give the host of a fake, such as "partner.example" (mounted with twice.HTTPHost) or "payments.twice.test"`)
	case strings.ContainsAny(h, "/ ") || strings.Contains(h, "://"):
		return "", fmt.Errorf(`twice: a.BaseURL(%q): give the host alone, such as "partner.example", without scheme or path`, host)
	case b.mounts[h]:
		return h, nil
	}
	if name, _, err := net.SplitHostPort(h); err == nil && b.mounts[name] && name != providerHost {
		return h, nil // the router serves host:port by its host name
	}
	return "", fmt.Errorf("twice: a.BaseURL(%q): no fake serves host %q: mount a fake of that API with twice.HTTPHost(%q, handler), "+
		"or ask for the payment provider's host, %q", host, h, h, providerHost)
}

// handler hands each request to the worker's router as a request to host.
// When the router gives no response (the attempt crashed, its reply was
// lost, or no attempt runs on the worker), the connection is closed with
// no response.
func (b *Servers) handler(host string) http.Handler {
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

// Named returns req as a request to the host of the server it is
// addressed to, when it is addressed to one of these servers: a job that
// sends a request for a base URL through a.HTTP or http.DefaultTransport
// reaches the router once, under the host's name.
func (b *Servers) Named(req *http.Request) *http.Request {
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

// NameIn replaces in text each server's address with its host.
func (b *Servers) NameIn(text string) string {
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

// NameErr returns err with NameIn applied to its text.
func (b *Servers) NameErr(err error) error {
	if err == nil {
		return nil
	}
	if text := b.NameIn(err.Error()); text != err.Error() {
		return namedError{text: text, err: err}
	}
	return err
}

// Close closes every server and waits until each stopped serving.
func (b *Servers) Close() {
	b.mu.Lock()
	b.closed = true
	servers := b.servers
	b.mu.Unlock()
	for _, s := range servers {
		_ = s.server.Close()
		<-s.served
	}
}

// Transport is a.HTTP's transport: a request for a base URL goes to the
// router (RT) under its host's name.
type Transport struct {
	RT http.RoundTripper
	B  *Servers
}

// RoundTrip sends req, renamed to its host when it is for a base URL.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.RT.RoundTrip(t.B.Named(req))
}

// CloseIdleConnections closes the router's idle connections to the provider.
func (t Transport) CloseIdleConnections() {
	if c, ok := t.RT.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
