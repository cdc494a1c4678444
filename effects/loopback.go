package effects

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
)

// LoopbackHost is how a request to a loopback server of the test (an
// httptest server on 127.0.0.1:<port>) is named in labels and effects: the
// port changes with every run, the name does not.
const LoopbackHost = "loopback"

// ThroughDefault returns the transport for the requests of an attempt that
// reached the router through http.DefaultTransport (http.DefaultClient, a
// client with no Transport, an SDK built with its defaults): as
// [Router.Client]'s, and a request to a loopback address that no fake
// serves goes to that server of the test through pass, as an effect call
// recorded like a mounted host's (Key "<METHOD> loopback<path>"). Anything
// else is refused before it is sent.
func (r *Router) ThroughDefault(pass http.RoundTripper) http.RoundTripper {
	return routerTransport{r: r, loopback: pass}
}

// isLoopback reports whether host (without port) is this machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// pass sends req to a loopback server of the test through rt, with the
// gate protocol of a mounted host, and records it by the same rules.
func (r *Router) pass(req *http.Request, rt http.RoundTripper) (*http.Response, error) {
	ctx := req.Context()
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	target := LoopbackHost + req.URL.Path
	label := "http " + req.Method + " " + target
	if k := req.Header.Get(IdempotencyKeyHeader); k != "" {
		label += " (Idempotency-Key " + k + ")"
	}
	var resp *http.Response
	err = r.rec.apply(ctx, Call{Kind: KindHTTP, Label: label}, func(ctx context.Context, o Origin) error {
		out := req.Clone(ctx)
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		var err error
		resp, err = rt.RoundTrip(out)
		if err != nil {
			return err
		}
		if safeMethods[req.Method] || resp.StatusCode/100 == 4 || resp.Header.Get(ReplayedHeader) == "true" {
			return nil
		}
		recordIn(r.rec.log, Effect{Kind: KindHTTP, Key: req.Method + " " + target, Payload: bodyPayload(body), Origin: o})
		return nil
	})
	if err != nil {
		if resp != nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		return nil, err
	}
	return resp, nil
}
