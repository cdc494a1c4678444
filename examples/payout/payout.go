// Package payout is the first source document's restaurant payout, "pay
// restaurant 381 ₹84,000 for week 2026-W42", through a payment provider that
// deduplicates by Idempotency-Key, as Stripe and most payment APIs do.
//
// The job skips a week already recorded, POSTs the payout to the provider,
// and records the provider's payout ID. A crash after the provider paid and
// before the row is written — or a reply lost on the way back — makes the
// queue deliver the job again, and the retry pays again unless the provider
// recognises it:
//
//   - [RandomKeyJob]: a fresh random key per attempt protects nothing.
//   - [JobKeyJob]: the key comes from the job
//     ("payout-restaurant-381-2026-W42"), the same on every retry; the
//     provider answers the retry with the first payout.
//
// Providers only remember a key for a limited time (about a day). With
// twice.LateRedrive(48*time.Hour) the check also redrives the job two days
// after a crash, and the fixed job is flagged: the provider has forgotten
// the key and pays again. An hour later (twice.LateRedrive(time.Hour)) it
// still remembers. The jobs use pgx (Attempt.Pool) and the attempt's HTTP
// client (Attempt.HTTP, Attempt.Payments).
package payout

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

//go:embed schema.sql
var schemaFS embed.FS

// Schema is the story's schema: payouts.
var Schema = pgfixture.FS(schemaFS)

// Seed is the data every scenario starts from: last week's payout.
var Seed = twice.SeedSQL(`INSERT INTO payouts (restaurant_id, week, amount_paise, provider_id)
VALUES (381, '2026-W41', 7950000, 'po_earlier')`)

// PayRestaurant is the job's payload.
type PayRestaurant struct {
	RestaurantID int64
	Week         string
	AmountPaise  int64
}

// Restaurant381 is the payload every form is checked with: ₹84,000.
var Restaurant381 = PayRestaurant{RestaurantID: 381, Week: "2026-W42", AmountPaise: 8400000}

// IdempotencyKey derives the key from the job: the same on every retry.
func (p PayRestaurant) IdempotencyKey() string {
	return fmt.Sprintf("payout-restaurant-%d-%s", p.RestaurantID, p.Week)
}

// RandomKey is a new UUID-like key, different on every attempt.
func RandomKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// Pay is one delivery of the job: skip a week already paid, POST the payout
// with an Idempotency-Key from key, record the provider's payout ID.
func (p PayRestaurant) Pay(key func() string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		var id string
		err := a.Pool.QueryRow(ctx, `SELECT provider_id FROM payouts WHERE restaurant_id = $1 AND week = $2`,
			p.RestaurantID, p.Week).Scan(&id)
		switch {
		case err == nil:
			return nil // paid already
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		id, err = p.post(ctx, a, key())
		if err != nil {
			return err
		}
		_, err = a.Pool.Exec(ctx, `INSERT INTO payouts (restaurant_id, week, amount_paise, provider_id)
VALUES ($1, $2, $3, $4) ON CONFLICT (restaurant_id, week) DO NOTHING`, p.RestaurantID, p.Week, p.AmountPaise, id)
		return err
	}
}

// post asks the provider for the payout and returns its ID.
func (p PayRestaurant) post(ctx context.Context, a *twice.Attempt, key string) (string, error) {
	body, err := json.Marshal(map[string]any{
		"amount":      p.AmountPaise,
		"currency":    "INR",
		"destination": fmt.Sprintf("restaurant_%d", p.RestaurantID),
		"description": "payout " + p.Week,
	})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.Payments+"/v1/payouts", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("payout %s: the provider answered %s", key, resp.Status)
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", fmt.Errorf("payout %s: reading the provider's answer: %w", key, err)
	}
	return out.ID, nil
}

func job(name string, run func(context.Context, *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: Schema, Seed: Seed, Run: run}
}

// RandomKeyJob pays restaurant 381 with a random key per attempt.
func RandomKeyJob() twice.Job { return job("payout: random key", Restaurant381.Pay(RandomKey)) }

// JobKeyJob pays restaurant 381 with the key payout-restaurant-381-2026-W42.
func JobKeyJob() twice.Job {
	return job("payout: key from the job", Restaurant381.Pay(Restaurant381.IdempotencyKey))
}

// Forms lists the story's forms with what the check is expected to say.
func Forms() []story.Form {
	return []story.Form{{
		Story: "payout", Name: "random-key", Job: RandomKeyJob(),
		Flagged: []string{"crash@3", "crash-after@2", "reply-lost@2"},
		Lesson:  "a random key is different on every attempt, so it protects nothing",
	}, {
		Story: "payout", Name: "job-key", Job: JobKeyJob(),
		Options: []twice.Option{twice.LateRedrive(time.Hour)},
		Lesson:  "a key from the job is the same on every retry: the provider pays once, even when redriven an hour later",
	}, {
		Story: "payout", Name: "job-key+redrive-48h", Job: JobKeyJob(),
		Options: []twice.Option{twice.LateRedrive(48 * time.Hour)},
		Flagged: []string{"redrive-48h@2"},
		Lesson:  "providers remember a key for about a day: a redrive two days later pays again",
	}}
}
