package rewards_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

var shipSchema = pgfixture.SQL(`CREATE TABLE orders (id bigint PRIMARY KEY, shipped boolean NOT NULL DEFAULT false);`)

// shipOrder is the app's job, written against its own SMS interface and a
// partner's HTTP API.
func shipOrder(ctx context.Context, a *twice.Attempt, sms SMSSender, carrier string) error {
	var shipped bool
	if err := a.Pool.QueryRow(ctx, `SELECT shipped FROM orders WHERE id = 6735`).Scan(&shipped); err != nil || shipped {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, carrier+"/v1/bookings", strings.NewReader(`{"order":6735}`))
	if err != nil {
		return err
	}
	req.Header.Set("Idempotency-Key", "ship-order-6735")
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if err := sms.SendSMS(ctx, "+15550100", "Order 6735 has shipped"); err != nil {
		return err
	}
	_, err = a.Pool.Exec(ctx, `UPDATE orders SET shipped = true WHERE id = 6735`)
	return err
}

// docs/effects.md shows the code from here to the end of TestShipOrder.

// The app's own interface, and the one method that makes the attempt its fake.
type SMSSender interface {
	SendSMS(ctx context.Context, to, text string) error
}

type smsVia struct{ a *twice.Attempt }

func (s smsVia) SendSMS(ctx context.Context, to, text string) error {
	return s.a.Effect(ctx, "sms", to, text, nil) // kind, key, payload, the real call (none)
}

// A fake of the carrier's API: any http.Handler. It replays a known
// Idempotency-Key as the real API does, and says so with the header.
type carrierAPI struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (c *carrierAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := r.Header.Get("Idempotency-Key"); c.keys[k] {
		w.Header().Set("Idempotent-Replayed", "true") // not recorded again
	} else {
		c.keys[k] = true
	}
	_, _ = io.WriteString(w, `{"status":"booked"}`)
}

func (c *carrierAPI) Reset() { c.mu.Lock(); c.keys = map[string]bool{}; c.mu.Unlock() } // before each scenario

func TestShipOrder(t *testing.T) {
	job := twice.Job{
		Schema: shipSchema,
		Seed:   twice.SeedSQL(`INSERT INTO orders (id) VALUES (6735)`),
		Run: func(ctx context.Context, a *twice.Attempt) error {
			return shipOrder(ctx, a, smsVia{a}, "https://carrier.example") // only the base URL changes
		},
	}
	twice.AssertIdempotent(t, job,
		twice.HTTPHost("carrier.example", &carrierAPI{}),
		twice.EffectPolicy("sms", effects.AtLeastOnce)) // a rare second text beats a missing one
}

// Without the policy, a crash between the text and the mark sends it twice.
func TestShipOrderTextsTwiceUnderExactlyOnce(t *testing.T) {
	job := twice.Job{
		Schema: shipSchema,
		Seed:   twice.SeedSQL(`INSERT INTO orders (id) VALUES (6735)`),
		Run: func(ctx context.Context, a *twice.Attempt) error {
			return shipOrder(ctx, a, smsVia{a}, "https://carrier.example")
		},
	}
	rep := twice.Check(context.Background(), job, twice.HTTPHost("carrier.example", &carrierAPI{}), twice.WithoutConcurrency("the sequential scenarios say it"))
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	var tokens []string
	for _, f := range rep.Findings {
		tokens = append(tokens, f.Token)
	}
	if got := strings.Join(tokens, " "); got != "crash@4 crash-after@3 reply-lost@3" {
		t.Fatalf("findings %q, want crash@4 crash-after@3 reply-lost@3:\n%s", got, rep)
	}
}
