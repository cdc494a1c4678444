// Package refund is a refund job written with the real Stripe client,
// github.com/stripe/stripe-go/v82, pointed at twice's fake provider: "refund
// $20.00 of charge ch_6735 for order 6735". The job skips an order already
// refunded, asks Stripe for the refund, and records the refund's ID.
//
// The client is the one an app already has; only its backend changes, to
// the attempt's provider URL and HTTP client:
//
//	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
//	    URL:        stripe.String(a.Payments),
//	    HTTPClient: a.HTTP,
//	})
//
// What stripe-go does by itself for idempotency (v82.5.1): for every POST
// (and PUT, PATCH, DELETE) whose params carry no key, NewRequest adds one
// made by NewIdempotencyKey (stripe.go:591-592), which is the wall-clock
// time in nanoseconds and four random bytes (params.go:338-345). The key is
// made once per call and kept for that call's own retries (the request is
// built once, then sent up to 1 + MaxNetworkRetries times, default 2:
// stripe.go:718-745). So:
//
//   - [AutoKeyJob] leaves the key to stripe-go. A lost reply is survived:
//     stripe-go retries the same request with the same key and the provider
//     replays the first refund (reply-lost@2 passes). But a crash after
//     Stripe refunded, before the row is written, makes the queue deliver
//     the job again; the new attempt's call gets a new key, and the customer
//     is refunded twice (crash-after@2, crash@3, and two deliveries at once).
//   - [JobKeyJob] sets the key from the job (params.SetIdempotencyKey with
//     "refund-order-6735"): every delivery sends the same key and Stripe
//     answers the retry with the first refund.
//
// Reports stay deterministic: stripe-go's random keys print as ‹new key N›,
// its User-Agent and telemetry headers are never recorded, and the fake's
// ids are numbered (re_000001).
package refund

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stripe/stripe-go/v82"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

//go:embed schema.sql
var schemaFS embed.FS

// Schema is the story's schema: refunds.
var Schema = pgfixture.FS(schemaFS)

// RefundOrder is the job's payload.
type RefundOrder struct {
	OrderID     int64
	ChargeID    string
	AmountCents int64
}

// Order6735 is the payload every form is checked with: $20.00 of ch_6735.
var Order6735 = RefundOrder{OrderID: 6735, ChargeID: "ch_6735", AmountCents: 2000}

// IdempotencyKey derives the key from the job: the same on every retry.
func (r RefundOrder) IdempotencyKey() string { return fmt.Sprintf("refund-order-%d", r.OrderID) }

// Client is the app's Stripe client, pointed at the attempt's provider:
// the backend's URL is a.Payments and its HTTP client a.HTTP (so every
// request is a point of the attempt). Telemetry and logging are off; they
// would not reach a report anyway.
func Client(a *twice.Attempt) *stripe.Client {
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL:             stripe.String(a.Payments),
		HTTPClient:      a.HTTP,
		EnableTelemetry: stripe.Bool(false),
		LeveledLogger:   &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
	return stripe.NewClient("sk_test_twice", stripe.WithBackends(&stripe.Backends{
		API: backend, Connect: backend, Uploads: backend, MeterEvents: backend,
	}))
}

// Refund is one delivery of the job: skip an order already refunded, ask
// Stripe for the refund (with the key from key, or stripe-go's own when
// key is nil), record the refund's ID.
func (r RefundOrder) Refund(key func() string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		var id string
		err := a.Pool.QueryRow(ctx, `SELECT stripe_refund FROM refunds WHERE order_id = $1`, r.OrderID).Scan(&id)
		switch {
		case err == nil:
			return nil // refunded already
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		params := &stripe.RefundCreateParams{
			Charge: stripe.String(r.ChargeID),
			Amount: stripe.Int64(r.AmountCents),
		}
		params.AddMetadata("order", fmt.Sprint(r.OrderID))
		if key != nil {
			params.SetIdempotencyKey(key())
		}
		refund, err := Client(a).V1Refunds.Create(ctx, params)
		if err != nil {
			return fmt.Errorf("refund for order %d: %w", r.OrderID, err)
		}
		_, err = a.Pool.Exec(ctx, `INSERT INTO refunds (order_id, amount_cents, stripe_refund)
VALUES ($1, $2, $3) ON CONFLICT (order_id) DO NOTHING`, r.OrderID, refund.Amount, refund.ID)
		return err
	}
}

func job(name string, run func(context.Context, *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: Schema, Run: run}
}

// AutoKeyJob refunds order 6735 with the key stripe-go makes by itself.
func AutoKeyJob() twice.Job { return job("refund: stripe-go's own key", Order6735.Refund(nil)) }

// JobKeyJob refunds order 6735 with the key refund-order-6735.
func JobKeyJob() twice.Job {
	return job("refund: key from the job", Order6735.Refund(Order6735.IdempotencyKey))
}

// Forms lists the story's forms with what the check is expected to say.
func Forms() []story.Form {
	return []story.Form{{
		Story: "refund", Name: "stripe-go-key", Job: AutoKeyJob(),
		Flagged: []string{"crash@3", "crash-after@2"},
		Lesson:  "stripe-go's own key is new on every call: it covers its own retries, not a redelivery",
	}, {
		Story: "refund", Name: "job-key", Job: JobKeyJob(),
		Options: []twice.Option{twice.LateRedrive(time.Hour)},
		Lesson:  "params.SetIdempotencyKey with a key from the job: Stripe refunds once, whoever retries",
	}}
}
