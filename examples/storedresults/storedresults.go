// Package storedresults is the first source document's "store results you
// computed": a late order earns its customer ₹50 for every started hour it
// is late, paid through the payment provider with an idempotency key from
// the job ("compensation-order-9812").
//
//   - [ComputedJob] computes the amount when it runs, from the clock, pays,
//     then records the payment. A retry soon after a crash computes the same
//     amount and the provider answers it with the first payout. A retry an
//     hour later (a redrive, or a long backoff) computes a bigger amount,
//     sends it under the same key, and the provider refuses it: "Keys for
//     idempotent requests can only be used with the same parameters". The
//     job never succeeds again and the compensation is never recorded. The
//     check shows it with twice.LateRedrive(time.Hour), and the report's
//     hint says "the retry computed a different request".
//   - [StoredFirstJob] saves the amount under a unique key before acting on
//     it, so every retry pays the number the first attempt computed.
//
// The jobs read the time from Attempt.Now, the check's clock, which only
// moves when a scenario says so. They use database/sql (Attempt.DB) and the
// attempt's HTTP client.
package storedresults

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

//go:embed schema.sql
var schemaFS embed.FS

// Schema is the story's schema: orders and compensations.
var Schema = pgfixture.FS(schemaFS)

// Seed is the data every scenario starts from: order 9812 was promised for
// 07:00 on the day the check's clock starts (09:00 UTC, 12 October 2026).
var Seed = twice.SeedSQL(`INSERT INTO orders (id, customer_id, promised_at) VALUES
  (9812, 77, '2026-10-12 07:00:00+00'),
  (9811, 78, '2026-10-12 12:00:00+00')`)

// CompensateLateOrder is the job's payload.
type CompensateLateOrder struct{ OrderID int64 }

// Order9812 is the payload every form is checked with.
var Order9812 = CompensateLateOrder{OrderID: 9812}

// PerHourPaise is the compensation per started hour of lateness: ₹50.
const PerHourPaise = 5000

// Amount is the compensation for an order promised by promised and not
// delivered by now.
func Amount(promised, now time.Time) int64 {
	late := now.Sub(promised)
	if late <= 0 {
		return 0
	}
	hours := int64((late + time.Hour - 1) / time.Hour)
	return hours * PerHourPaise
}

func (j CompensateLateOrder) key() string { return fmt.Sprintf("compensation-order-%d", j.OrderID) }

// Computed computes the amount, pays it, then records it.
func (j CompensateLateOrder) Computed(ctx context.Context, a *twice.Attempt) error {
	var (
		promised time.Time
		paid     sql.NullString
	)
	err := a.DB.QueryRowContext(ctx, `SELECT o.promised_at, c.provider_id
FROM orders o LEFT JOIN compensations c ON c.order_id = o.id
WHERE o.id = $1`, j.OrderID).Scan(&promised, &paid)
	if err != nil || paid.Valid {
		return err
	}
	amount := Amount(promised, a.Now())
	if amount == 0 {
		return nil
	}
	id, err := j.pay(ctx, a, amount)
	if err != nil {
		return err
	}
	_, err = a.DB.ExecContext(ctx, `INSERT INTO compensations (order_id, amount_paise, provider_id) VALUES ($1, $2, $3)
ON CONFLICT (order_id) DO NOTHING`, j.OrderID, amount, id)
	return err
}

// StoredFirst computes the amount and stores it before paying; a retry
// finds the stored amount and pays that.
func (j CompensateLateOrder) StoredFirst(ctx context.Context, a *twice.Attempt) error {
	var promised time.Time
	if err := a.DB.QueryRowContext(ctx, `SELECT promised_at FROM orders WHERE id = $1`, j.OrderID).Scan(&promised); err != nil {
		return err
	}
	if amount := Amount(promised, a.Now()); amount > 0 {
		_, err := a.DB.ExecContext(ctx, `INSERT INTO compensations (order_id, amount_paise) VALUES ($1, $2)
ON CONFLICT (order_id) DO NOTHING`, j.OrderID, amount)
		if err != nil {
			return err
		}
	}
	var (
		amount int64
		paid   sql.NullString
	)
	err := a.DB.QueryRowContext(ctx, `SELECT amount_paise, provider_id FROM compensations WHERE order_id = $1`, j.OrderID).
		Scan(&amount, &paid)
	if errors.Is(err, sql.ErrNoRows) || paid.Valid {
		return nil // not late, or paid already
	}
	if err != nil {
		return err
	}
	id, err := j.pay(ctx, a, amount)
	if err != nil {
		return err
	}
	_, err = a.DB.ExecContext(ctx, `UPDATE compensations SET provider_id = $2 WHERE order_id = $1`, j.OrderID, id)
	return err
}

// pay POSTs the payment to the provider and returns its payout ID.
func (j CompensateLateOrder) pay(ctx context.Context, a *twice.Attempt, amount int64) (string, error) {
	body, err := json.Marshal(map[string]any{
		"amount":      amount,
		"currency":    "INR",
		"destination": "customer_wallet",
		"description": fmt.Sprintf("late delivery, order %d", j.OrderID),
	})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.Payments+"/v1/payouts", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", j.key())
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("compensation for order %d: the provider answered %s", j.OrderID, resp.Status)
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	return out.ID, nil
}

func job(name string, run func(context.Context, *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: Schema, Seed: Seed, Run: run}
}

// ComputedJob compensates order 9812 with an amount computed at run time.
func ComputedJob() twice.Job { return job("stored results: computed at run time", Order9812.Computed) }

// StoredFirstJob compensates order 9812 with an amount stored first.
func StoredFirstJob() twice.Job { return job("stored results: stored first", Order9812.StoredFirst) }

// Redrive is the option both forms are checked with: a redrive an hour
// after a crash, well inside the provider's key window.
var Redrive = twice.LateRedrive(time.Hour)

// Forms lists the story's forms with what the check is expected to say.
func Forms() []story.Form {
	return []story.Form{{
		Story: "storedresults", Name: "computed", Job: ComputedJob(), Options: []twice.Option{Redrive},
		Flagged: []string{"redrive-1h@2"},
		Lesson:  "an amount computed from the clock changes between attempts; the same key with a new amount is refused",
	}, {
		Story: "storedresults", Name: "stored-first", Job: StoredFirstJob(), Options: []twice.Option{Redrive},
		Lesson: "store what you computed before acting on it: every retry pays the same number",
	}}
}
