package effects_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
)

// fakeClock is the check's clock: it moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 10, 12, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type reply struct {
	status   int
	body     string
	replayed string
}

func post(t *testing.T, c *http.Client, url, key, body string) reply {
	t.Helper()
	r, err := postErr(c, url, key, body)
	require.NoError(t, err)
	return r
}

func postErr(c *http.Client, url, key, body string) (reply, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url+"/v1/payouts", strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(effects.IdempotencyKeyHeader, key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, body: string(b), replayed: resp.Header.Get(effects.ReplayedHeader)}, err
}

func newProvider(t *testing.T, opts ...effects.ProviderOption) (*effects.Provider, *effects.Log, *fakeClock) {
	t.Helper()
	log, clock := effects.NewLog(), newFakeClock()
	p := effects.NewProvider(log, clock.Now, opts...)
	t.Cleanup(p.Close)
	return p, log, clock
}

const payout = `{"amount": 8400, "currency": "inr", "destination": "restaurant-381"}`
const payoutCanonical = `{"amount":8400,"currency":"inr","destination":"restaurant-381"}`

func TestProviderReplay(t *testing.T) {
	p, log, _ := newProvider(t)
	c := p.Client(nil)
	first := post(t, c, p.URL(), "payout-restaurant-381-2026-W42", payout)
	assert.Equal(t, http.StatusOK, first.status)
	assert.Equal(t, `{"amount":8400,"currency":"inr","destination":"restaurant-381","id":"po_000001","object":"payout","status":"paid"}`+"\n", first.body)
	assert.Empty(t, first.replayed)

	// Same request, fields reordered and spaced differently: the same request.
	again := post(t, c, p.URL(), "payout-restaurant-381-2026-W42", `{"destination":"restaurant-381","currency":"inr","amount":8400}`)
	assert.Equal(t, reply{status: http.StatusOK, body: first.body, replayed: "true"}, again)

	want := []effects.Effect{{Kind: "payment", Key: "payout-restaurant-381-2026-W42", Payload: payoutCanonical, Seq: 1}}
	assert.Equal(t, want, p.Applied())
	assert.Equal(t, want, log.Effects())
	assert.Equal(t, 1, p.Replays())
	assert.Empty(t, p.Rejected())
}

func TestProviderMismatch(t *testing.T) {
	p, log, _ := newProvider(t)
	c := p.Client(nil)
	require.Equal(t, http.StatusOK, post(t, c, p.URL(), "k1", payout).status)
	r := post(t, c, p.URL(), "k1", `{"amount":8450,"currency":"inr","destination":"restaurant-381"}`)
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	var e struct {
		Error struct{ Type, Message string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.body), &e))
	assert.Equal(t, "idempotency_error", e.Error.Type)
	assert.Contains(t, e.Error.Message, "'k1'")
	assert.Len(t, p.Applied(), 1, "a mismatch applies nothing")
	assert.Equal(t, 1, log.Len())
	assert.Equal(t, []effects.Rejection{{Key: "k1", First: payoutCanonical, Got: `{"amount":8450,"currency":"inr","destination":"restaurant-381"}`}}, p.Rejected())

	// The first request under k1 still replays.
	assert.Equal(t, "true", post(t, c, p.URL(), "k1", payout).replayed)
}

func TestProviderWindow(t *testing.T) {
	p, log, clock := newProvider(t, effects.Window(time.Hour))
	c := p.Client(nil)
	require.Empty(t, post(t, c, p.URL(), "k", payout).replayed)
	clock.Advance(time.Hour - time.Nanosecond)
	require.Equal(t, "true", post(t, c, p.URL(), "k", payout).replayed, "remembered inside the window")
	clock.Advance(time.Nanosecond)
	r := post(t, c, p.URL(), "k", payout)
	assert.Equal(t, http.StatusOK, r.status)
	assert.Empty(t, r.replayed, "forgotten at the end of the window: applied again")
	assert.Contains(t, r.body, `"id":"po_000002"`)
	assert.Equal(t, 2, log.Len())
	// The window restarts from the new first use.
	clock.Advance(30 * time.Minute)
	assert.Equal(t, "true", post(t, c, p.URL(), "k", payout).replayed)
}

func TestProviderDefaultWindow(t *testing.T) {
	p, _, clock := newProvider(t)
	c := p.Client(nil)
	post(t, c, p.URL(), "k", payout)
	clock.Advance(23 * time.Hour)
	assert.Equal(t, "true", post(t, c, p.URL(), "k", payout).replayed)
	clock.Advance(25 * time.Hour) // a late redrive: 48h after the first use
	assert.Empty(t, post(t, c, p.URL(), "k", payout).replayed)
	assert.Len(t, p.Applied(), 2)
}

func TestProviderNoKey(t *testing.T) {
	p, _, _ := newProvider(t)
	c := p.Client(nil)
	a := post(t, c, p.URL(), "", payout)
	b := post(t, c, p.URL(), "", payout)
	assert.Equal(t, http.StatusOK, b.status)
	assert.NotEqual(t, a.body, b.body, "two payouts, two ids")
	assert.Equal(t, []effects.Effect{
		{Kind: "payment", Payload: payoutCanonical, Seq: 1},
		{Kind: "payment", Payload: payoutCanonical, Seq: 2},
	}, p.Applied())
}

func TestProviderInvalidRequests(t *testing.T) {
	p, log, _ := newProvider(t)
	c := p.Client(nil)
	for _, body := range []string{`not json`, `[1]`, `{"amount":0}`, `{"amount":1.5}`, `{"currency":"inr"}`, `{"amount":1}{}`} {
		r := post(t, c, p.URL(), "k", body)
		assert.Equal(t, http.StatusBadRequest, r.status, body)
	}
	// A failed validation is not remembered: the key is still free.
	r := post(t, c, p.URL(), "k", payout)
	assert.Equal(t, http.StatusOK, r.status)
	assert.Empty(t, r.replayed)
	assert.Equal(t, 1, log.Len())

	resp, err := c.Get(p.URL() + "/v1/payouts")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp, err = c.Post(p.URL()+"/v2/charges", "application/json", strings.NewReader(payout)) // every /v1 path is served
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	req, err := http.NewRequest(http.MethodPost, p.URL()+"/v1/payouts", strings.NewReader(payout))
	require.NoError(t, err)
	req.Header.Set("Twice-Origin", "job=1;attempt=x;point=2")
	resp, err = c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, 1, log.Len())
}

func TestProviderConcurrentSameKey(t *testing.T) {
	p, log, _ := newProvider(t)
	c := p.Client(nil)
	const n = 8
	replies := make([]reply, n)
	errs := make([]error, n)
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			replies[i], errs[i] = postErr(c, p.URL(), "k", payout)
		}()
	}
	ready.Wait()
	close(start) // all requests go at once
	done.Wait()
	applied := 0
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, http.StatusOK, replies[i].status)
		assert.Equal(t, replies[0].body, replies[i].body, "every request sees the one payout")
		if replies[i].replayed == "" {
			applied++
		}
	}
	assert.Equal(t, 1, applied)
	assert.Len(t, p.Applied(), 1)
	assert.Equal(t, 1, log.Len())
	assert.Equal(t, n-1, p.Replays())
}

func TestProviderReset(t *testing.T) {
	p, log, _ := newProvider(t)
	c := p.Client(nil)
	post(t, c, p.URL(), "k", payout)
	post(t, c, p.URL(), "k", `{"amount":1}`)
	p.Reset()
	assert.Empty(t, p.Applied())
	assert.Empty(t, p.Rejected())
	assert.Zero(t, p.Replays())
	r := post(t, c, p.URL(), "k", payout)
	assert.Empty(t, r.replayed, "keys forgotten")
	assert.Contains(t, r.body, `"id":"po_000001"`)
	assert.Equal(t, 2, log.Len(), "the log is not the provider's")
}

func TestClientGate(t *testing.T) {
	p, log, _ := newProvider(t)
	g := &fakeGate{job: "payout 381"}
	c := p.Client(g)
	r := post(t, c, p.URL(), "k", payout)
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, []effects.Effect{{Kind: "payment", Key: "k", Payload: payoutCanonical,
		Origin: effects.Origin{JobID: "payout 381", Attempt: 1, Point: 1}, Seq: 1}}, log.Effects())
	assert.Equal(t, []string{
		"before payment: payment POST /v1/payouts (Idempotency-Key k)",
		"after payment: payment POST /v1/payouts (Idempotency-Key k)",
	}, g.Calls())
}

func TestClientRefused(t *testing.T) {
	p, log, _ := newProvider(t)
	c := p.Client(&fakeGate{before: errCrashed})
	_, err := postErr(c, p.URL(), "", payout)
	require.ErrorIs(t, err, errCrashed)
	assert.Contains(t, err.Error(), "effects: payment POST /v1/payouts (no Idempotency-Key): refused: attempt crashed")
	assert.Empty(t, p.Applied(), "nothing was sent")
	assert.Zero(t, log.Len())
}

func TestClientReplyLost(t *testing.T) {
	p, log, _ := newProvider(t)
	g := &fakeGate{job: "j", after: errReplyLost}
	c := p.Client(g)
	_, err := postErr(c, p.URL(), "uuid-attempt-1", payout)
	require.ErrorIs(t, err, errReplyLost)
	assert.Contains(t, err.Error(), "applied, but the reply was lost: reply lost")
	assert.Len(t, p.Applied(), 1, "the provider applied it")
	assert.Equal(t, 1, log.Len())

	// The retry with a fresh key per attempt charges twice; with the same key it replays.
	g.after = nil
	post(t, c, p.URL(), "uuid-attempt-2", payout)
	assert.Len(t, p.Applied(), 2)
	assert.Equal(t, "true", post(t, c, p.URL(), "uuid-attempt-1", payout).replayed)
}
