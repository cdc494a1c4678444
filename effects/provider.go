package effects

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"time"
)

// Headers spoken by the [Provider].
const (
	// IdempotencyKeyHeader carries the job's idempotency key.
	IdempotencyKeyHeader = "Idempotency-Key"
	// ReplayedHeader is "true" on a response replayed for a known key.
	ReplayedHeader = "Idempotent-Replayed"
)

// payoutsPath is the provider's first endpoint: POST an object with a
// positive integer "amount" to create a payout. Its recorded payload is the
// body alone; every other path's payload starts with the path.
const payoutsPath = "/v1/payouts"

// DefaultWindow is how long a [Provider] remembers an idempotency key.
const DefaultWindow = 24 * time.Hour

// ProviderOption configures a [Provider].
type ProviderOption func(*Provider)

// Window sets how long the provider remembers an idempotency key, measured
// on the provider's clock from the request that first used it. The default
// is [DefaultWindow]. A key is remembered while now < first use + d.
func Window(d time.Duration) ProviderOption { return func(p *Provider) { p.window = d } }

// Rejection is a request the provider refused because its idempotency key
// had been used with a different request (HTTP 422). Nothing was applied.
type Rejection struct {
	Key    string
	First  string // recorded payload of the request that first used Key
	Got    string // recorded payload of the rejected request
	Origin Origin // who sent the rejected request
}

// Provider is a fake payment API in Stripe's dialect, served over real
// HTTP on loopback, with the Idempotency-Key semantics Stripe documents:
//
//   - POST to any /v1/<resource>, /v1/<resource>/<id> or
//     /v1/<resource>/<id>/<action> path (/v1/payouts, /v1/refunds,
//     /v1/charges, /v1/payment_intents, /v1/payment_intents/pi_1/confirm,
//     ...); another path is 404, another method 405, both in Stripe's error
//     shape {"error": {"type", "message", "param"}}.
//   - The body is a JSON object or, with Content-Type
//     application/x-www-form-urlencoded, a form as Stripe's clients send it
//     (metadata[order]=6735 nests, a[]=x lists, integers and true/false
//     become numbers and booleans outside metadata): the same parameters
//     either way are the same request.
//   - Creating requires "amount" (a positive integer) for payouts, charges,
//     payment intents and transfers, and "charge" or "payment_intent" for
//     refunds; any "amount" must be a positive integer (else 400, nothing
//     applied, nothing remembered).
//   - The response is 200 with a Stripe-shaped object: the request's fields
//     (but "expand") plus "id" (numbered per prefix since the last
//     [Provider.Reset]: "po_000001", "re_000001", "ch_000001",
//     "pi_000001"; never random), "object" ("payout", "refund", ...),
//     "status" where Stripe has one ("paid", "succeeded", ...), and, for
//     every object but payouts, "created" (the provider's clock) and
//     "livemode": false.
//   - No Idempotency-Key: applied every time.
//   - A key seen within the window, with the same request (method, path and
//     canonical body: field order, spacing and encoding do not matter): the
//     first response is replayed (same status and body, header
//     Idempotent-Replayed: true) and nothing is applied.
//   - A key seen within the window, with a different request: 422 with an
//     error of type "idempotency_error"; nothing is applied; the request is
//     kept in [Provider.Rejected].
//   - Keys are remembered for the window (see [Window]) on the clock given
//     to [NewProvider] (the check's clock, not wall time), then forgotten: a
//     request with a forgotten key is applied again.
//   - Concurrent requests with one key: the provider handles requests one at
//     a time, so exactly one applies and the others then see its stored
//     result (a replay, or 422 if their body differs). No 409 is ever
//     returned, so the outcome never depends on timing.
//
// Each applied request is recorded in the log as Effect{Kind: "payment",
// Key: <the Idempotency-Key or "">, Payload: <the canonical JSON body, after
// the path for every path but /v1/payouts>}, with the Origin read from the
// Twice-Origin header set by the client of [Provider.Client]. The provider keeps
// its own bookkeeping as well ([Provider.Applied], [Provider.Rejected],
// [Provider.Replays]), apart from the log.
type Provider struct {
	log    *Log
	clock  func() time.Time
	window time.Duration
	srv    *httptest.Server

	mu       sync.Mutex
	keys     map[string]*remembered
	applied  []Effect
	rejected []Rejection
	replays  int
	nextID   map[string]int // per id prefix
}

type remembered struct {
	fingerprint string
	payload     string
	at          time.Time
	resp        response
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// NewProvider starts a provider on a loopback port. It records applied
// requests in log (which may be nil) and reads time from clock (nil means
// time.Now, fine outside a check). Close it when done.
func NewProvider(log *Log, clock func() time.Time, opts ...ProviderOption) *Provider {
	if clock == nil {
		clock = time.Now
	}
	p := &Provider{log: log, clock: clock, window: DefaultWindow, keys: map[string]*remembered{}, nextID: map[string]int{}}
	for _, o := range opts {
		o(p)
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	return p
}

// URL is the provider's base URL, e.g. "http://127.0.0.1:41234". It changes
// from one provider to the next: keep it out of anything compared or printed.
func (p *Provider) URL() string { return p.srv.URL }

// Close stops the server; it waits for requests in flight.
func (p *Provider) Close() { p.srv.Close() }

// Applied returns the requests the provider applied, in order, as recorded
// in the log (Seq is the log's; 0 when the log is nil).
func (p *Provider) Applied() []Effect {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Effect(nil), p.applied...)
}

// Rejected returns the requests refused for reusing a key with a different
// request, in order.
func (p *Provider) Rejected() []Rejection {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Rejection(nil), p.rejected...)
}

// Replays returns how many responses were replayed for a known key.
func (p *Provider) Replays() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.replays
}

// Reset forgets every key and the provider's bookkeeping (not the log's),
// so one provider can serve scenario after scenario. Payout ids restart.
func (p *Provider) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = map[string]*remembered{}
	p.applied, p.rejected, p.replays, p.nextID = nil, nil, 0, map[string]int{}
}

func (p *Provider) serve(w http.ResponseWriter, r *http.Request) {
	res, ok := resourceOf(r.URL.Path)
	if !ok {
		writeResponse(w, apiError(http.StatusNotFound, "invalid_request_error", "", "Unrecognized request URL ("+r.Method+": "+r.URL.Path+"). The fake provider serves POST /v1/<resource> and POST /v1/<resource>/<id>[/<action>]."))
		return
	}
	if r.Method != http.MethodPost {
		writeResponse(w, apiError(http.StatusMethodNotAllowed, "invalid_request_error", "", "use POST: the fake provider serves only requests that change something"))
		return
	}
	origin, err := parseOrigin(r.Header.Get(originHeader))
	if err != nil {
		writeResponse(w, apiError(http.StatusBadRequest, "invalid_request_error", "", err.Error()))
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeResponse(w, apiError(http.StatusBadRequest, "invalid_request_error", "", "reading the body: "+err.Error()))
		return
	}
	fields, canonical, err := canonicalBody(r.Header.Get("Content-Type"), raw)
	if err != nil {
		writeResponse(w, apiError(http.StatusBadRequest, "invalid_request_error", "", err.Error()))
		return
	}
	key := r.Header.Get(IdempotencyKeyHeader)
	payload := paymentPayload(r.URL.Path, canonical)
	writeResponse(w, p.handle(key, r.Method+" "+r.URL.Path+" "+canonical, payload, res, fields, origin))
}

// paymentPayload is the recorded payload of a request: its canonical body,
// after its path for every path but payoutsPath (whose payload stays the
// body alone, as it always was).
func paymentPayload(path, canonical string) string {
	if path == payoutsPath {
		return canonical
	}
	return path + " " + canonical
}

// handle decides and applies one well-formed request under the lock, so
// requests sharing a key are serialised.
func (p *Provider) handle(key, fingerprint, payload string, res resource, fields map[string]any, origin Origin) response {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock()
	for k, m := range p.keys {
		if !now.Before(m.at.Add(p.window)) {
			delete(p.keys, k)
		}
	}
	if key != "" {
		if m, ok := p.keys[key]; ok {
			if m.fingerprint == fingerprint {
				p.replays++
				resp := m.resp
				resp.header = resp.header.Clone()
				resp.header.Set(ReplayedHeader, "true")
				return resp
			}
			p.rejected = append(p.rejected, Rejection{Key: key, First: m.payload, Got: payload, Origin: origin})
			return apiError(http.StatusUnprocessableEntity, "idempotency_error", "", fmt.Sprintf(
				"Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '%s' if you meant to execute a different request.", key))
		}
	}
	if param, err := res.validate(fields); err != nil {
		return apiError(http.StatusBadRequest, "invalid_request_error", param, err.Error())
	}
	body, _ := json.Marshal(p.object(res, fields, now)) // decoded JSON values always marshal
	resp := response{status: http.StatusOK, header: http.Header{}, body: append(body, '\n')}
	resp.header.Set("Content-Type", "application/json")
	if key != "" {
		resp.header.Set(IdempotencyKeyHeader, key)
	}
	e := recordIn(p.log, Effect{Kind: KindPayment, Key: key, Payload: payload, Origin: origin})
	p.applied = append(p.applied, e)
	if key != "" {
		p.keys[key] = &remembered{fingerprint: fingerprint, payload: payload, at: now, resp: resp}
	}
	return resp
}

// object builds the Stripe-shaped object a request creates (or acts on):
// the request's fields (but "expand") plus "id", "object", "status" and,
// for every resource but payouts, "created" (on the provider's clock) and
// "livemode": false. New ids are numbered per prefix from the last Reset.
func (p *Provider) object(res resource, fields map[string]any, now time.Time) map[string]any {
	out := make(map[string]any, len(fields)+5)
	for k, v := range fields {
		if k != "expand" {
			out[k] = v
		}
	}
	id := res.id
	if id == "" {
		p.nextID[res.prefix]++
		id = fmt.Sprintf("%s_%06d", res.prefix, p.nextID[res.prefix])
	}
	out["id"] = id
	out["object"] = res.object
	if st := res.status(); st != nil {
		out["status"] = st
	}
	if res.object != "payout" {
		out["created"] = now.Unix()
		out["livemode"] = false
	}
	return out
}

// apiError is an error in Stripe's shape: {"error": {"type", "message",
// and "param" when one parameter is at fault}}.
func apiError(status int, typ, param, msg string) response {
	e := map[string]string{"type": typ, "message": msg}
	if param != "" {
		e["param"] = param
	}
	body, _ := json.Marshal(map[string]any{"error": e})
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return response{status: status, header: h, body: append(body, '\n')}
}

func writeResponse(w http.ResponseWriter, r response) {
	keys := make([]string, 0, len(r.header))
	for k := range r.header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.Header()[k] = r.header[k]
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body)
}
