package twice_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// An order that is refunded, charged again and paid by a payment intent,
// then marked done: the Stripe paths beyond payouts.

var orderSchema = pgfixture.SQL(`
CREATE TABLE orders (
  id       bigint PRIMARY KEY,
  settled  boolean NOT NULL DEFAULT false,
  notified boolean NOT NULL DEFAULT false
);`)

func orderJob(name string, run func(ctx context.Context, a *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: orderSchema, Run: run,
		Seed: twice.SeedSQL(`INSERT INTO orders (id) VALUES (6735)`)}
}

// stripePost POSTs a form to the provider, as Stripe's clients do.
func stripePost(ctx context.Context, a *twice.Attempt, path, key string, form url.Values) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.Payments+path, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Idempotency-Key", key)
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s %s", path, resp.Status, body)
	}
	return nil
}

// settle refunds, charges and creates a payment intent, then marks the order.
func settle(key func(a *twice.Attempt, what string) string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		var settled bool
		if err := a.Pool.QueryRow(ctx, `SELECT settled FROM orders WHERE id = 6735`).Scan(&settled); err != nil || settled {
			return err
		}
		steps := []struct {
			path string
			form url.Values
		}{
			{"/v1/refunds", url.Values{"charge": {"ch_6735"}, "amount": {"2000"}}},
			{"/v1/charges", url.Values{"amount": {"1500"}, "currency": {"usd"}, "metadata[order]": {"6735"}}},
			{"/v1/payment_intents", url.Values{"amount": {"1500"}, "currency": {"usd"}, "confirm": {"true"}}},
		}
		for _, s := range steps {
			if err := stripePost(ctx, a, s.path, key(a, s.path), s.form); err != nil {
				return err
			}
		}
		_, err := a.Pool.Exec(ctx, `UPDATE orders SET settled = true WHERE id = 6735`)
		return err
	}
}

func randomStripeKey(*twice.Attempt, string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func orderKey(_ *twice.Attempt, path string) string {
	return "order-6735" + strings.ReplaceAll(path, "/", "-")
}

const refundPayment = `payment "/v1/refunds {\"amount\":2000,\"charge\":\"ch_6735\"}"`

func TestStripePathsRunCleanly(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, orderJob("settle, key from the job", settle(orderKey)))
	require.Empty(t, tokens, rep.String())
	var got []string
	for _, e := range rep.Reference.Effects {
		got = append(got, e.Payload)
	}
	require.Equal(t, []string{
		`/v1/refunds {"amount":2000,"charge":"ch_6735"}`,
		`/v1/charges {"amount":1500,"currency":"usd","metadata":{"order":"6735"}}`,
		`/v1/payment_intents {"amount":1500,"confirm":true,"currency":"usd"}`,
	}, got)
	// crash@2 (before the first POST) leaves the world crash@1 leaves.
	require.Equal(t, []string{"sequential", "crash@1", "crash@3", "crash@4", "crash@5", "crash@end", "duplicate-enqueue",
		"crash-after@2", "reply-lost@2", "crash-after@3", "reply-lost@3", "crash-after@4", "reply-lost@4"}, sequentialTokens(rep))
}

func TestStripePathsWithARandomKeyAreFlagged(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), orderJob("settle, random key", settle(randomStripeKey)), twice.Only("crash-after@2"))
	require.NoError(t, rep.Err)
	require.Len(t, rep.Findings, 1, rep.String())
	f := rep.Findings[0]
	require.Equal(t, "not idempotent: crash after point 2 of 5 was applied (payment POST /v1/refunds (Idempotency-Key ‹new key 1›)), before the job heard back, then redelivery", f.Headline)
	require.Equal(t, []string{refundPayment + ": want 1, got 2 (exactly-once)"}, mismatchStrings(f.Effects))
	require.Equal(t, "the key changed between attempts (‹new key 1›, ‹new key 2›): derive it from the job, not the attempt", f.Hints[0])
	require.Contains(t, f.Timeline, "payment POST /v1/payment_intents (Idempotency-Key ‹new key 4›)")
}

func TestStripePathsRedrivenPastTheWindowAreFlagged(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, orderJob("settle, key from the job", settle(orderKey)), twice.LateRedrive(48*time.Hour), twice.WithoutConcurrency("covered by TestStripePathsRunCleanly"))
	require.Equal(t, []string{"redrive-48h@2", "redrive-48h@3", "redrive-48h@4"}, tokens, rep.String())
	f := rep.Findings[0]
	require.Equal(t, "not idempotent: late redrive: crash after point 2 of 5 was applied (payment POST /v1/refunds (Idempotency-Key order-6735-v1-refunds)), redriven after 48h", f.Headline)
	require.Equal(t, []string{refundPayment + ": want 1, got 2 (exactly-once)"}, mismatchStrings(f.Effects))
	require.Equal(t, "the provider applied key order-6735-v1-refunds 2 times: it had forgotten the key (the retry came after its idempotency window)", f.Hints[0])

	rep, tokens = findingTokens(t, orderJob("settle, key from the job", settle(orderKey)), twice.LateRedrive(time.Hour), twice.WithoutConcurrency("covered by TestStripePathsRunCleanly"))
	require.Empty(t, tokens, rep.String())
}

// sequentialTokens lists the scenarios that ran, but the concurrent ones.
func sequentialTokens(rep *twice.Report) []string {
	var out []string
	for _, tok := range rep.Tokens() {
		if !strings.HasPrefix(tok, "concurrent:") && !strings.HasPrefix(tok, "overlap@") {
			out = append(out, tok)
		}
	}
	return out
}

// The app's own interface for text messages, and the one adapter method
// that makes an attempt's effect its fake.
type SMSSender interface {
	SendSMS(ctx context.Context, to, text string) error
}

type smsFake struct{ a *twice.Attempt }

func (f smsFake) SendSMS(ctx context.Context, to, text string) error {
	return f.a.Effect(ctx, "sms", to, text, nil)
}

// notifyShipped texts the customer, then marks the order notified, guarded
// by the mark: the app's code, written against its own interface.
func notifyShipped(ctx context.Context, sms SMSSender, a *twice.Attempt) error {
	var notified bool
	if err := a.Pool.QueryRow(ctx, `SELECT notified FROM orders WHERE id = 6735`).Scan(&notified); err != nil || notified {
		return err
	}
	if err := sms.SendSMS(ctx, "+15550100", "Order 6735 has shipped"); err != nil {
		return err
	}
	_, err := a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735 AND NOT notified`)
	return err
}

func TestCustomEffectKind(t *testing.T) {
	t.Parallel()
	job := orderJob("sms, then mark", func(ctx context.Context, a *twice.Attempt) error {
		return notifyShipped(ctx, smsFake{a}, a)
	})
	rep, tokens := findingTokens(t, job)
	require.Equal(t, []string{"crash@3", "crash-after@2", "reply-lost@2", "overlap@1"}, tokens, rep.String())
	f := rep.Findings[1]
	require.Equal(t, `not idempotent: crash after point 2 of 3 was applied (sms +15550100 "Order 6735 has shipped"), before the job heard back, then redelivery`, f.Headline)
	require.Equal(t, []string{`sms +15550100 "Order 6735 has shipped": want 1, got 2 (exactly-once)`}, mismatchStrings(f.Effects))
	require.Equal(t, []string{`sms +15550100 "Order 6735 has shipped" is made twice here and once in the reference run: the job makes it before recording that it did, so a crash or a lost reply between the two repeats it; record first to lose it instead (at-most-once), or declare "sms" at-least-once if a rare duplicate beats a missing one`}, f.Hints)
	require.Equal(t, []effects.Effect{{Kind: "sms", Key: "+15550100", Payload: "Order 6735 has shipped",
		Origin: effects.Origin{JobID: "job-1", Attempt: 1, Point: 2}, Seq: 1}}, rep.Reference.Effects)

	rep, tokens = findingTokens(t, job, twice.EffectPolicy("sms", effects.AtLeastOnce))
	require.Empty(t, tokens, rep.String())
	// crash@2 (before the SMS) leaves the world crash@1 leaves: covered by it.
	require.Equal(t, []string{"sequential", "crash@1", "crash@3", "crash@end", "duplicate-enqueue", "crash-after@2", "reply-lost@2"}, sequentialTokens(rep))
}

// partnerAPI is a user's fake of a partner's API: it records every request
// it sees and, when deduplicating, replays a known Idempotency-Key.
type partnerAPI struct {
	dedupe bool
	mu     sync.Mutex
	seen   []string
	keys   map[string]bool
}

func (p *partnerAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, fmt.Sprintf("%s %s%s %s (%s)", r.Method, r.Host, r.URL.Path, body, r.Header.Get("Twice-Origin")))
	if k := r.Header.Get("Idempotency-Key"); p.dedupe && k != "" {
		if p.keys[k] {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		p.keys[k] = true
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"status":"accepted"}`)
}

// Reset forgets the keys: the check calls it before every scenario.
func (p *partnerAPI) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = map[string]bool{}
}

func (p *partnerAPI) Seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// shipOrder books a shipment with the partner, then marks the order. The
// job's HTTP code only has its base URL pointed at the mounted host.
func shipOrder(base string, key string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		var done bool
		if err := a.Pool.QueryRow(ctx, `SELECT notified FROM orders WHERE id = 6735`).Scan(&done); err != nil || done {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v2/shipments", bytes.NewReader([]byte(`{"order": 6735, "carrier": "ups"}`)))
		if err != nil {
			return err
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := a.HTTP.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		_, err = a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735`)
		return err
	}
}

func TestMountedHostSeesEveryRequest(t *testing.T) {
	t.Parallel()
	api := &partnerAPI{}
	job := orderJob("ship, then mark", shipOrder("https://partner.example", ""))
	rep := twice.Check(context.Background(), job, twice.HTTPHost("partner.example", api), twice.Only("crash-after@2"))
	require.NoError(t, rep.Err)
	require.Equal(t, []string{
		`POST partner.example/v2/shipments {"order": 6735, "carrier": "ups"} (job=job-1;attempt=1;point=2)`,
		`POST partner.example/v2/shipments {"order": 6735, "carrier": "ups"} (job=job-1;attempt=1;point=2)`,
		`POST partner.example/v2/shipments {"order": 6735, "carrier": "ups"} (job=job-1;attempt=1;point=2)`,
		`POST partner.example/v2/shipments {"order": 6735, "carrier": "ups"} (job=job-1;attempt=2;point=2)`,
	}, api.Seen(), "the reference run twice (the second finds values that differ between clean runs), then the attempt that died after the apply, then the redelivery")
	require.Len(t, rep.Findings, 1)
	f := rep.Findings[0]
	require.Equal(t, "not idempotent: crash after point 2 of 3 was applied (http POST partner.example/v2/shipments), before the job heard back, then redelivery", f.Headline)
	require.Equal(t, []string{`http POST partner.example/v2/shipments "{\"carrier\":\"ups\",\"order\":6735}": want 1, got 2 (exactly-once)`}, mismatchStrings(f.Effects))

	// Every effect scenario applies; with a key the partner de-duplicates, the job passes.
	rep, tokens := findingTokens(t, job, twice.HTTPHost("partner.example", &partnerAPI{}))
	require.Equal(t, []string{"crash@3", "crash-after@2", "reply-lost@2", "overlap@1"}, tokens, rep.String())
	fixed := orderJob("ship with a key, then mark", shipOrder("https://partner.example", "ship-6735"))
	rep, tokens = findingTokens(t, fixed, twice.HTTPHost("partner.example", &partnerAPI{dedupe: true}))
	require.Empty(t, tokens, rep.String())
}

func TestUnmountedHostFailsClearly(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, orderJob("ship to nowhere", shipOrder("https://api.partner.example", "")))
	require.Equal(t, []string{"once"}, tokens)
	require.Equal(t, []string{`the job failed on a clean run: Post "https://api.partner.example/v2/shipments": effects: no fake serves host "api.partner.example" (POST /v2/shipments): ` +
		`a check never sends a request to the network; mount a fake of that API with twice.HTTPHost("api.partner.example", handler), or send payments to the fake provider at a.Payments` +
		"\n(the reference run must succeed once before twice can compare anything with it)"}, problems(rep.Findings[0]))

	rep = twice.Check(context.Background(), orderJob("bad mount", shipOrder("https://partner.example", "")), twice.HTTPHost("https://partner.example", &partnerAPI{}))
	require.EqualError(t, rep.Err, `twice: HTTPHost: effects: mount "https://partner.example": give the host alone (such as "partner.example"), without scheme or path`)
}
