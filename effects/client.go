package effects

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// originHeader carries the [Origin] of a request from the client of
// [Provider.Client] to the provider, as
//
//	Twice-Origin: job=<job ID, query-escaped>;attempt=<N>;point=<K>
//
// A request without it is recorded with the zero Origin.
const originHeader = "Twice-Origin"

// formatOrigin renders o for the originHeader.
func formatOrigin(o Origin) string {
	return "job=" + url.QueryEscape(o.JobID) + ";attempt=" + strconv.Itoa(o.Attempt) + ";point=" + strconv.Itoa(o.Point)
}

// parseOrigin parses an originHeader value; "" is the zero Origin.
func parseOrigin(s string) (Origin, error) {
	var o Origin
	if s == "" {
		return o, nil
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ";") {
		name, value, ok := strings.Cut(part, "=")
		if !ok || seen[name] {
			return Origin{}, fmt.Errorf("bad %s header %q", originHeader, s)
		}
		seen[name] = true
		var err error
		switch name {
		case "job":
			o.JobID, err = url.QueryUnescape(value)
		case "attempt":
			o.Attempt, err = strconv.Atoi(value)
		case "point":
			o.Point, err = strconv.Atoi(value)
		default:
			err = fmt.Errorf("unknown field %q", name)
		}
		if err != nil {
			return Origin{}, fmt.Errorf("bad %s header %q: %v", originHeader, s, err)
		}
	}
	if len(seen) != 3 {
		return Origin{}, fmt.Errorf("bad %s header %q: want job, attempt and point", originHeader, s)
	}
	return o, nil
}

// Client returns an HTTP client for the provider, for the harness to hand
// to one attempt. Its transport asks gate before sending each request (a
// refusal sends nothing and fails the request with an error wrapping the
// gate's), sets the Twice-Origin header from the Origin the gate returned, and
// asks gate again once a response arrived: an error there drops the
// response (the provider did apply the request) and fails the request with
// an error wrapping the gate's: the reply was lost. A transport error (no
// response at all) is returned as is and After is not asked. gate may be
// nil: then requests go straight through with no origin.
//
// The gate sees Call{Kind: "payment", Label: "payment POST /v1/payouts
// (Idempotency-Key k)"}; the label holds no host or port.
func (p *Provider) Client(gate Gate) *http.Client {
	return &http.Client{Transport: &gatedTransport{base: p.srv.Client().Transport, gate: gate}}
}

type gatedTransport struct {
	base http.RoundTripper
	gate Gate
}

func (t *gatedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.gate == nil {
		return t.base.RoundTrip(req)
	}
	ctx := req.Context()
	c := Call{Kind: KindPayment, Label: paymentLabel(req)}
	o, err := t.gate.Before(ctx, c)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("effects: %s: refused: %w", c.Label, err)
	}
	req = req.Clone(ctx)
	req.Header.Set(originHeader, formatOrigin(o))
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if err := t.gate.After(ctx, c); err != nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return nil, fmt.Errorf("effects: %s: applied, but the reply was lost: %w", c.Label, err)
	}
	return resp, nil
}

func paymentLabel(req *http.Request) string {
	key := req.Header.Get(IdempotencyKeyHeader)
	k := "no Idempotency-Key"
	if key != "" {
		k = "Idempotency-Key " + key
	}
	return fmt.Sprintf("payment %s %s (%s)", req.Method, req.URL.Path, k)
}
