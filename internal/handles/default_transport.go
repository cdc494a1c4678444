package handles

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// The requests a job sends through http.DefaultTransport (http.DefaultClient,
// a client with no Transport, an SDK built with its defaults) with an
// attempt's context are the attempt's: points and effects, answered by the
// check's fakes or passed through to a loopback server of the test, never
// sent to the network. Requests without an attempt's context (the test's
// own, another library's) go through the transport as before.
//
// The transport is changed once, when twice initializes (before any
// request, so without a data race), and stays a *http.Transport: "http" is
// a registered protocol of it whose RoundTrip gives every request without
// an attempt's context back to the transport (http.ErrSkipAltProtocol),
// and its Proxy refuses https requests with an attempt's context (the
// transport owns https for HTTP/2; a fake answers over http).

// HookDefaultTransport hooks rt, http.DefaultTransport: of says, for a
// request's context, the transport of the attempt it carries (nil when it
// carries none, or the attempt has none).
func HookDefaultTransport(rt http.RoundTripper, of func(context.Context) http.RoundTripper) {
	t, ok := rt.(*http.Transport)
	if !ok {
		return // replaced before twice initialized: unseen (docs/visibility.md)
	}
	t.RegisterProtocol("http", attemptHTTP{of})
	proxy := t.Proxy
	t.Proxy = func(req *http.Request) (*url.URL, error) {
		if of(req.Context()) != nil {
			return nil, refusedHTTPS(req)
		}
		if proxy == nil {
			return nil, nil
		}
		return proxy(req)
	}
}

// attemptHTTP is the "http" protocol of http.DefaultTransport during a
// check: an attempt's request goes through the attempt's router.
type attemptHTTP struct {
	of func(context.Context) http.RoundTripper
}

func (h attemptHTTP) RoundTrip(req *http.Request) (*http.Response, error) {
	rt := h.of(req.Context())
	if rt == nil {
		return nil, http.ErrSkipAltProtocol
	}
	return rt.RoundTrip(req)
}

// Loopback sends an attempt's requests to the test's own loopback
// servers: a transport of its own (http.DefaultTransport would hand them
// back to the attempt), without keep-alives, so that no connection
// outlives the request.
var Loopback = &http.Transport{
	DialContext:       (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	DisableKeepAlives: true,
}

func refusedHTTPS(req *http.Request) error {
	host := req.URL.Hostname()
	return fmt.Errorf("twice: %s %s through http.DefaultTransport: a check never sends a request to the network; "+
		"mount a fake of that API with twice.HTTPHost(%q, handler) and give the client the base URL http://%s (the check answers it over http), "+
		"or send it through a.HTTP, which serves https too", req.Method, req.URL.Redacted(), host, req.URL.Host)
}
