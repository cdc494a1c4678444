package effects

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// KindHTTP is the kind of the requests recorded by a [Router]'s hosts.
const KindHTTP = "http"

// ProviderURL is the base URL under which a [Router] reaches its
// [Provider] (a.Payments): a name of its own, so that nothing a job prints
// (an error of its HTTP client, say) carries the provider's loopback port,
// which changes with every check. The provider's own URL works too.
const ProviderURL = "http://" + providerHost

const providerHost = "payments.twice.test"

// Router is the HTTP side of an attempt: a client whose requests go by host
// to the [Provider] or to the http.Handlers mounted with [Router.Mount],
// and nowhere else. A request to any other host is refused before anything
// is sent: a check never reaches the network.
//
// A request to a mounted host is an effect call, with the same gate
// protocol as [Recorder.Do]: a point before it (a refusal sends nothing),
// the handler run in process, then the gate's After (the handler ran, then
// the attempt died or the reply was lost). It is recorded as
// Effect{Kind: "http", Key: "<METHOD> <host><path>", Payload: <the body,
// as canonical JSON when it is a JSON object, else as sent>} unless it
// changed nothing: a GET, HEAD, OPTIONS or TRACE, an answer in the 4xx
// range (the API refused it), or an answer carrying Idempotent-Replayed:
// true (the API replayed an earlier result). A handler that de-duplicates
// by key says so with that header. The point's label is
// "http <METHOD> <host><path>", plus " (Idempotency-Key k)" when the
// request carries one.
type Router struct {
	rec      *Recorder
	provider string // the provider's host, "" without one
	toProv   http.RoundTripper

	mu    sync.RWMutex
	hosts map[string]http.Handler
}

// NewRouter returns a router recording in log and asking gate (either may
// be nil) that sends requests for p's host (p may be nil) to p through
// [Provider.Client].
func NewRouter(log *Log, gate Gate, p *Provider) *Router {
	r := &Router{rec: NewRecorder(log, gate), hosts: map[string]http.Handler{}}
	if p != nil {
		u, _ := url.Parse(p.URL()) // httptest's URL always parses
		r.provider = u.Host
		r.toProv = p.Client(gate).Transport
	}
	return r
}

// Mount serves requests for host (a host name such as "partner.example",
// or host:port to match only that port) with h. It fails on an empty host,
// a host with a scheme or path, or a host mounted twice.
func (r *Router) Mount(host string, h http.Handler) error {
	switch {
	case host == "" || h == nil:
		return fmt.Errorf("effects: mounting an HTTP fake needs a host name (such as \"partner.example\") and a handler")
	case strings.ContainsAny(host, "/ ") || strings.Contains(host, "://"):
		return fmt.Errorf("effects: mount %q: give the host alone (such as \"partner.example\"), without scheme or path", host)
	}
	host = strings.ToLower(host)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.hosts[host]; dup || host == r.provider || host == providerHost {
		return fmt.Errorf("effects: host %q is mounted twice: mount one handler per host", host)
	}
	r.hosts[host] = h
	return nil
}

// Reset calls Reset on every mounted handler that has that method, in the
// order of their hosts, so a fake with state (the keys it de-duplicates)
// starts each scenario afresh, as the provider does.
func (r *Router) Reset() {
	for _, host := range r.Hosts() {
		r.mu.RLock()
		h := r.hosts[host]
		r.mu.RUnlock()
		if rs, ok := h.(interface{ Reset() }); ok {
			rs.Reset()
		}
	}
}

// Hosts returns the mounted hosts, sorted.
func (r *Router) Hosts() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.hosts))
	for h := range r.hosts {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// Client returns the client a job uses: every request goes through the
// router.
func (r *Router) Client() *http.Client { return &http.Client{Transport: routerTransport{r: r}} }

type routerTransport struct {
	r        *Router
	loopback http.RoundTripper // ThroughDefault's: requests to loopback servers go there; nil refuses them
}

// CloseIdleConnections closes the idle connections to the provider.
func (t routerTransport) CloseIdleConnections() {
	if c, ok := t.r.toProv.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (t routerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := t.r
	host := strings.ToLower(req.URL.Host)
	if r.toProv != nil && host == providerHost {
		out := req.Clone(req.Context())
		out.URL.Host, out.Host = r.provider, r.provider
		return r.toProv.RoundTrip(out)
	}
	if r.toProv != nil && host == r.provider {
		return r.toProv.RoundTrip(req)
	}
	r.mu.RLock()
	h := r.hosts[host]
	if h == nil {
		h = r.hosts[strings.ToLower(req.URL.Hostname())]
	}
	r.mu.RUnlock()
	if h == nil && t.loopback != nil && isLoopback(req.URL.Hostname()) {
		return r.pass(req, t.loopback)
	}
	if h == nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		err := fmt.Errorf("effects: no fake serves host %q (%s %s): a check never sends a request to the network; "+
			"mount a fake of that API with twice.HTTPHost(%q, handler), or send payments to the fake provider at a.Payments",
			req.URL.Host, req.Method, req.URL.Path, req.URL.Hostname())
		if strings.HasSuffix(req.URL.Hostname(), "stripe.com") {
			err = fmt.Errorf("%w (for stripe-go: stripe.BackendConfig{URL: stripe.String(a.Payments), HTTPClient: a.HTTP})", err)
		}
		return nil, err
	}
	return r.serve(req, h)
}

// safeMethods change nothing: their requests are points, not records.
var safeMethods = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodOptions: true, http.MethodTrace: true}

func (r *Router) serve(req *http.Request, h http.Handler) (*http.Response, error) {
	ctx := req.Context()
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	target := strings.ToLower(req.URL.Host) + req.URL.Path
	label := "http " + req.Method + " " + target
	if k := req.Header.Get(IdempotencyKeyHeader); k != "" {
		label += " (Idempotency-Key " + k + ")"
	}
	var resp *http.Response
	err = r.rec.apply(ctx, Call{Kind: KindHTTP, Label: label}, func(ctx context.Context, o Origin) error {
		in := req.Clone(ctx)
		in.Body = io.NopCloser(bytes.NewReader(body))
		in.ContentLength = int64(len(body))
		in.Host = req.URL.Host
		in.RequestURI = req.URL.RequestURI()
		in.RemoteAddr = "192.0.2.1:1234" // a handler may read it: a fixed documentation address
		if !o.IsZero() {
			in.Header.Set(originHeader, formatOrigin(o))
		}
		rw := httptest.NewRecorder()
		h.ServeHTTP(rw, in)
		resp = rw.Result()
		resp.Request = req
		if safeMethods[req.Method] || resp.StatusCode/100 == 4 || resp.Header.Get(ReplayedHeader) == "true" {
			return nil
		}
		recordIn(r.rec.log, Effect{Kind: KindHTTP, Key: req.Method + " " + target, Payload: bodyPayload(body), Origin: o})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// bodyPayload is a request body as recorded: canonical JSON when it is a
// JSON object, else the body as sent.
func bodyPayload(body []byte) string {
	if _, canonical, err := canonicalJSON(body); err == nil {
		return canonical
	}
	return string(body)
}

// readBody reads and closes req's body (nil when it has none).
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("effects: reading the body of %s %s: %w", req.Method, req.URL, err)
	}
	return body, nil
}
