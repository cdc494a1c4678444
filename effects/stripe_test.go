package effects_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
)

const form = "application/x-www-form-urlencoded"

func postTo(t *testing.T, c *http.Client, url, contentType, key, body string) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	if key != "" {
		req.Header.Set(effects.IdempotencyKeyHeader, key)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{status: resp.StatusCode, body: string(b), replayed: resp.Header.Get(effects.ReplayedHeader)}
}

func TestProviderSpeaksStripe(t *testing.T) {
	p, log, _ := newProvider(t)
	c := p.Client(nil)
	u := p.URL()

	r := postTo(t, c, u+"/v1/refunds", form, "refund-6735", "amount=2000&charge=ch_6735&metadata[order]=6735&reason=requested_by_customer&expand[]=charge")
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, `{"amount":2000,"charge":"ch_6735","created":1791795600,"id":"re_000001","livemode":false,"metadata":{"order":"6735"},"object":"refund","reason":"requested_by_customer","status":"succeeded"}`+"\n", r.body)

	r = postTo(t, c, u+"/v1/charges", "application/json", "charge-6735", `{"amount": 5000, "currency": "usd", "capture": true}`)
	assert.Equal(t, `{"amount":5000,"capture":true,"created":1791795600,"currency":"usd","id":"ch_000001","livemode":false,"object":"charge","status":"succeeded"}`+"\n", r.body)

	r = postTo(t, c, u+"/v1/payment_intents", form, "pi-6735", "amount=5000&currency=usd&payment_method_types[0]=card")
	assert.Equal(t, `{"amount":5000,"created":1791795600,"currency":"usd","id":"pi_000001","livemode":false,"object":"payment_intent","payment_method_types":["card"],"status":"requires_payment_method"}`+"\n", r.body)
	r = postTo(t, c, u+"/v1/payment_intents/pi_000001/confirm", form, "", "")
	assert.Equal(t, `{"created":1791795600,"id":"pi_000001","livemode":false,"object":"payment_intent","status":"succeeded"}`+"\n", r.body)

	// The same parameters as JSON are the same request: replayed.
	r = postTo(t, c, u+"/v1/refunds", "application/json", "refund-6735", `{"reason":"requested_by_customer","metadata":{"order":"6735"},"charge":"ch_6735","amount":2000,"expand":["charge"]}`)
	assert.Equal(t, "true", r.replayed)
	assert.Contains(t, r.body, `"id":"re_000001"`)

	// Another path under the same key is another request: rejected in Stripe's shape.
	r = postTo(t, c, u+"/v1/charges", form, "refund-6735", "amount=2000&charge=ch_6735&metadata[order]=6735&reason=requested_by_customer&expand[]=charge")
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Contains(t, r.body, `"type":"idempotency_error"`)

	// Any resource is served, its object named after it.
	r = postTo(t, c, u+"/v1/customers", form, "", "email=ann@example.com")
	assert.Equal(t, `{"created":1791795600,"email":"ann@example.com","id":"cus_000001","livemode":false,"object":"customer"}`+"\n", r.body)
	r = postTo(t, c, u+"/v1/topups", form, "", "amount=100")
	assert.Contains(t, r.body, `"id":"top_000001","livemode":false,"object":"topup"`)

	var payloads []string
	for _, e := range log.Effects() {
		payloads = append(payloads, e.Payload)
	}
	assert.Equal(t, []string{
		`/v1/refunds {"amount":2000,"charge":"ch_6735","expand":["charge"],"metadata":{"order":"6735"},"reason":"requested_by_customer"}`,
		`/v1/charges {"amount":5000,"capture":true,"currency":"usd"}`,
		`/v1/payment_intents {"amount":5000,"currency":"usd","payment_method_types":["card"]}`,
		`/v1/payment_intents/pi_000001/confirm {}`,
		`/v1/customers {"email":"ann@example.com"}`,
		`/v1/topups {"amount":100}`,
	}, payloads)
	require.Len(t, p.Rejected(), 1)
	assert.Equal(t, []string{"the retry computed a different request (path /v1/refunds → /v1/charges): store what you computed before acting on it"}, effects.Diagnose(nil, nil, p.Rejected()...))
}

func TestProviderStripeErrors(t *testing.T) {
	p, log, _ := newProvider(t)
	c := p.Client(nil)
	u := p.URL()
	for _, tc := range []struct{ path, ctype, body, want string }{
		{"/v1/refunds", form, "amount=2000", `{"error":{"message":"Missing required param: one of charge, payment_intent","param":"charge","type":"invalid_request_error"}}`},
		{"/v1/charges", form, "currency=usd", `{"error":{"message":"amount: required, a positive integer","param":"amount","type":"invalid_request_error"}}`},
		{"/v1/charges", form, "amount=-5", `{"error":{"message":"amount: -5 is not a positive integer","param":"amount","type":"invalid_request_error"}}`},
		{"/v1/charges", form, "amount=ten", `{"error":{"message":"amount: ten is not a positive integer","param":"amount","type":"invalid_request_error"}}`},
		{"/v1/charges", form, "amount=1&amount=2", `{"error":{"message":"the form parameter \"amount\": given twice","type":"invalid_request_error"}}`},
		{"/v1/charges", form, "%zz", `{"error":{"message":"the form body does not parse: invalid URL escape \"%zz\"","type":"invalid_request_error"}}`},
		{"/v1/charges", "application/json", "amount=1", `{"error":{"message":"the body must be a JSON object (or a form, with Content-Type application/x-www-form-urlencoded)","type":"invalid_request_error"}}`},
	} {
		r := postTo(t, c, u+tc.path, tc.ctype, "", tc.body)
		assert.Equal(t, http.StatusBadRequest, r.status, tc.body)
		assert.Equal(t, tc.want+"\n", r.body, tc.body)
	}
	r := postTo(t, c, u+"/v2/core/events", form, "", "")
	assert.Equal(t, http.StatusNotFound, r.status)
	assert.Equal(t, `{"error":{"message":"Unrecognized request URL (POST: /v2/core/events). The fake provider serves POST /v1/\u003cresource\u003e and POST /v1/\u003cresource\u003e/\u003cid\u003e[/\u003caction\u003e].","type":"invalid_request_error"}}`+"\n", r.body)
	assert.Zero(t, log.Len())
}

// Keys are forgotten after the window, on every path, and the diagnostics
// name what happened whatever the path.
func TestProviderDiagnosticsOnEveryPath(t *testing.T) {
	p, log, clock := newProvider(t, effects.Window(time.Hour))
	c := p.Client(nil)
	u := p.URL()
	refund := "amount=2000&charge=ch_6735"
	postTo(t, c, u+"/v1/refunds", form, "refund-6735", refund)
	want := log.Effects()
	clock.Advance(time.Hour)
	assert.Empty(t, postTo(t, c, u+"/v1/refunds", form, "refund-6735", refund).replayed, "forgotten")
	assert.Equal(t, []string{"the provider applied key refund-6735 2 times: it had forgotten the key (the retry came after its idempotency window)"},
		effects.Diagnose(want, log.Effects()))

	log.Reset()
	p.Reset()
	postTo(t, c, u+"/v1/refunds", form, "attempt-1-key", refund)
	postTo(t, c, u+"/v1/refunds", form, "attempt-2-key", refund)
	assert.Equal(t, []string{"the key changed between attempts (attempt-1-key, attempt-2-key): derive it from the job, not the attempt"},
		effects.Diagnose(want, log.Effects()))

	log.Reset()
	p.Reset()
	postTo(t, c, u+"/v1/refunds", form, "refund-6735", refund)
	postTo(t, c, u+"/v1/refunds", form, "refund-6735", "amount=2050&charge=ch_6735")
	assert.Equal(t, []string{"the retry computed a different request (amount 2000 → 2050): store what you computed before acting on it"},
		effects.Diagnose(want, log.Effects(), p.Rejected()...))
}
