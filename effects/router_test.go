package effects_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
)

// partner is a user's fake of a partner API: it keeps what it saw and
// replays a request whose Idempotency-Key it knows.
type partner struct {
	mu   sync.Mutex
	seen []string
	keys map[string]bool
}

func (p *partner) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, r.Method+" "+r.Host+r.URL.RequestURI()+" "+string(body)+" origin="+r.Header.Get("Twice-Origin"))
	if k := r.Header.Get(effects.IdempotencyKeyHeader); k != "" {
		if p.keys[k] {
			w.Header().Set(effects.ReplayedHeader, "true")
		}
		if p.keys == nil {
			p.keys = map[string]bool{}
		}
		p.keys[k] = true
	}
	if r.URL.Path == "/v2/missing" {
		http.NotFound(w, r)
		return
	}
	_, _ = io.WriteString(w, `{"ok":true}`)
}

func (p *partner) Seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

func send(t *testing.T, c *http.Client, method, url, key, body string) (int, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, url, strings.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set(effects.IdempotencyKeyHeader, key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func TestRouterMountedHost(t *testing.T) {
	log := effects.NewLog()
	g := &fakeGate{job: "6735"}
	r := effects.NewRouter(log, g, nil)
	fake := &partner{}
	require.NoError(t, r.Mount("partner.example", fake))
	c := r.Client()

	for _, s := range []struct{ method, url, key, body string }{
		{http.MethodGet, "https://partner.example/v2/orders/6735?fields=all", "", ""},
		{http.MethodPost, "https://partner.example/v2/orders", "", `{"order": 6735, "qty": 2}`},
		{http.MethodPost, "http://PARTNER.example:8443/v2/orders", "order-6735", `qty=2`},
		{http.MethodPost, "https://partner.example/v2/orders", "order-6735", `qty=2`},
		{http.MethodPost, "https://partner.example/v2/missing", "", `x`},
	} {
		_, err := send(t, c, s.method, s.url, s.key, s.body)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{
		"GET partner.example/v2/orders/6735?fields=all  origin=job=6735;attempt=1;point=1",
		`POST partner.example/v2/orders {"order": 6735, "qty": 2} origin=job=6735;attempt=1;point=2`,
		"POST PARTNER.example:8443/v2/orders qty=2 origin=job=6735;attempt=1;point=3",
		"POST partner.example/v2/orders qty=2 origin=job=6735;attempt=1;point=4",
		"POST partner.example/v2/missing x origin=job=6735;attempt=1;point=5",
	}, fake.Seen(), "the handler sees every request")
	var got []string
	for _, e := range log.Effects() {
		got = append(got, e.String())
	}
	assert.Equal(t, []string{
		`#1 http POST partner.example/v2/orders "{\"order\":6735,\"qty\":2}" (job 6735 attempt 1 point 2)`,
		`#2 http POST partner.example:8443/v2/orders "qty=2" (job 6735 attempt 1 point 3)`,
	}, got, "a read, a replay and a refusal (4xx) change nothing")
	assert.Equal(t, []string{
		"before http: http GET partner.example/v2/orders/6735",
		"after http: http GET partner.example/v2/orders/6735",
		"before http: http POST partner.example/v2/orders",
		"after http: http POST partner.example/v2/orders",
		"before http: http POST partner.example:8443/v2/orders (Idempotency-Key order-6735)",
		"after http: http POST partner.example:8443/v2/orders (Idempotency-Key order-6735)",
		"before http: http POST partner.example/v2/orders (Idempotency-Key order-6735)",
		"after http: http POST partner.example/v2/orders (Idempotency-Key order-6735)",
		"before http: http POST partner.example/v2/missing",
		"after http: http POST partner.example/v2/missing",
	}, g.Calls())
	assert.Equal(t, []string{"partner.example"}, r.Hosts())
}

func TestRouterFaults(t *testing.T) {
	fake := &partner{}
	log := effects.NewLog()
	r := effects.NewRouter(log, &fakeGate{before: errCrashed}, nil)
	require.NoError(t, r.Mount("partner.example", fake))
	_, err := send(t, r.Client(), http.MethodPost, "https://partner.example/v2/orders", "", "{}")
	require.ErrorIs(t, err, errCrashed)
	assert.ErrorContains(t, err, "effects: http POST partner.example/v2/orders: refused: attempt crashed")
	assert.Empty(t, fake.Seen(), "a refused request reaches nothing")

	r = effects.NewRouter(log, &fakeGate{job: "j", after: errReplyLost}, nil)
	require.NoError(t, r.Mount("partner.example", fake))
	_, err = send(t, r.Client(), http.MethodPost, "https://partner.example/v2/orders", "", "{}")
	require.ErrorIs(t, err, errReplyLost)
	assert.ErrorContains(t, err, "effects: http POST partner.example/v2/orders: applied, but the reply was lost: reply lost")
	assert.Len(t, fake.Seen(), 1, "the handler ran")
	assert.Equal(t, 1, log.Len())
}

func TestRouterMountErrors(t *testing.T) {
	r := effects.NewRouter(nil, nil, nil)
	h := &partner{}
	assert.EqualError(t, r.Mount("", h), `effects: mounting an HTTP fake needs a host name (such as "partner.example") and a handler`)
	assert.EqualError(t, r.Mount("partner.example", nil), `effects: mounting an HTTP fake needs a host name (such as "partner.example") and a handler`)
	assert.EqualError(t, r.Mount("https://partner.example", h), `effects: mount "https://partner.example": give the host alone (such as "partner.example"), without scheme or path`)
	require.NoError(t, r.Mount("partner.example", h))
	assert.EqualError(t, r.Mount("Partner.Example", h), `effects: host "partner.example" is mounted twice: mount one handler per host`)
}

// A request to a host nobody mounted is refused before anything is sent,
// even when something listens there.
func TestRouterNeverReachesTheNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var accepted atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = conn.Close()
		}
	}()
	p, _, _ := newProvider(t)
	r := effects.NewRouter(effects.NewLog(), &fakeGate{job: "j"}, p)
	c := r.Client()
	_, err = send(t, c, http.MethodGet, "http://"+ln.Addr().String()+"/anything", "", "")
	require.Error(t, err)
	host := ln.Addr().String()
	assert.ErrorContains(t, err, `effects: no fake serves host "`+host+`" (GET /anything): a check never sends a request to the network; mount a fake of that API with twice.HTTPHost("127.0.0.1", handler), or send payments to the fake provider at a.Payments`)
	_, err = send(t, c, http.MethodPost, "https://api.partner.example/v1/orders", "", "{}")
	assert.ErrorContains(t, err, `effects: no fake serves host "api.partner.example" (POST /v1/orders)`)
	_, err = send(t, c, http.MethodPost, "https://api.stripe.com/v1/refunds", "", "amount=1")
	assert.ErrorContains(t, err, `effects: no fake serves host "api.stripe.com" (POST /v1/refunds): a check never sends a request to the network; `+
		`mount a fake of that API with twice.HTTPHost("api.stripe.com", handler), or send payments to the fake provider at a.Payments `+
		`(for stripe-go: stripe.BackendConfig{URL: stripe.String(a.Payments), HTTPClient: a.HTTP})`)
	require.NoError(t, ln.Close())
	<-done
	assert.Zero(t, accepted.Load(), "nothing was sent")

	// The provider's host goes to the provider.
	status, err := send(t, c, http.MethodPost, p.URL()+"/v1/payouts", "k", payout)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)
	assert.Len(t, p.Applied(), 1)
	c.CloseIdleConnections()
}

type resettable struct {
	partner
	resets int
}

func (r *resettable) Reset() { r.resets++ }

func TestRouterResetsTheHandlersThatCan(t *testing.T) {
	r := effects.NewRouter(nil, nil, nil)
	a, b := &resettable{}, &partner{}
	require.NoError(t, r.Mount("a.example", a))
	require.NoError(t, r.Mount("b.example", b))
	r.Reset()
	r.Reset()
	assert.Equal(t, 2, a.resets)
}
