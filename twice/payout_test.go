package twice_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The first document's restaurant payout through a provider that
// deduplicates by Idempotency-Key for about a day.

var payoutSchema = pgfixture.SQL(`
CREATE TABLE payouts (
  restaurant_id bigint NOT NULL,
  week          text   NOT NULL,
  amount        bigint NOT NULL CHECK (amount > 0),
  paid          boolean NOT NULL DEFAULT false,
  PRIMARY KEY (restaurant_id, week)
);`)

func payoutJob(name string, run func(ctx context.Context, a *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: payoutSchema, Run: run}
}

// pay POSTs a payout to the attempt's provider.
func pay(ctx context.Context, a *twice.Attempt, key string, amount int64) error {
	body, _ := json.Marshal(map[string]any{"restaurant": 381, "amount": amount, "currency": "INR"})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.Payments+"/v1/payouts", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("payout: provider answered %s", resp.Status)
	}
	return nil
}

// payOnce skips a week already paid, pays, then records the payout.
func payOnce(key func(a *twice.Attempt) string, amount func(ctx context.Context, a *twice.Attempt) (int64, error)) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		var paid bool
		err := a.Pool.QueryRow(ctx, `SELECT paid FROM payouts WHERE restaurant_id = 381 AND week = '2026-W42'`).Scan(&paid)
		if err == nil && paid {
			return nil
		}
		n, err := amount(ctx, a)
		if err != nil {
			return err
		}
		if err := pay(ctx, a, key(a), n); err != nil {
			return err
		}
		_, err = a.Pool.Exec(ctx, `INSERT INTO payouts (restaurant_id, week, amount, paid) VALUES (381, '2026-W42', $1, true)
ON CONFLICT (restaurant_id, week) DO UPDATE SET paid = true`, n)
		return err
	}
}

// A fresh random key per attempt protects nothing.
func randomKey(*twice.Attempt) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// A key from the job is the same on every retry.
func jobKey(*twice.Attempt) string { return "payout-restaurant-381-2026-W42" }

func fixedAmount(context.Context, *twice.Attempt) (int64, error) { return 84000, nil }

// weekEnd is when week 42 closed; the check's clock starts a day later.
var weekEnd = time.Date(2026, time.October, 11, 9, 0, 0, 0, time.UTC)

// lateFeeAmount computes the amount from the clock at run time: 84000 plus
// 50 for every hour since the week closed.
func lateFeeAmount(_ context.Context, a *twice.Attempt) (int64, error) {
	return 84000 + 50*int64(a.Now().Sub(weekEnd)/time.Hour), nil
}

// storedAmount stores the computed amount first, so a retry uses the same
// number.
func storedAmount(ctx context.Context, a *twice.Attempt) (int64, error) {
	n, _ := lateFeeAmount(ctx, a)
	var amount int64
	err := a.Pool.QueryRow(ctx, `WITH ins AS (
  INSERT INTO payouts (restaurant_id, week, amount) VALUES (381, '2026-W42', $1)
  ON CONFLICT (restaurant_id, week) DO NOTHING RETURNING amount)
SELECT amount FROM ins UNION ALL SELECT amount FROM payouts WHERE restaurant_id = 381 AND week = '2026-W42'
LIMIT 1`, n).Scan(&amount)
	return amount, err
}

func TestPayoutWithARandomKeyIsADoubleCharge(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, payoutJob("payout, random key", payOnce(randomKey, fixedAmount)))
	require.Contains(t, tokens, "reply-lost@2")
	require.Contains(t, tokens, "crash-after@2")
	for _, f := range rep.Findings {
		if f.Token == "reply-lost@2" {
			require.Equal(t, []string{`payment "{\"amount\":84000,\"currency\":\"INR\",\"restaurant\":381}": want 1, got 2 (exactly-once)`}, mismatchStrings(f.Effects))
			require.Contains(t, f.Hints[0], "the key changed between attempts (")
			require.Contains(t, f.Hints[0], "): derive it from the job, not the attempt")
		}
	}

	rep, tokens = findingTokens(t, payoutJob("payout, key from the job", payOnce(jobKey, fixedAmount)))
	require.Empty(t, tokens, rep.String())
	require.Contains(t, rep.Tokens(), "reply-lost@2")
}

func TestLateRedrivePastTheKeyWindow(t *testing.T) {
	t.Parallel()
	job := payoutJob("payout, key from the job", payOnce(jobKey, fixedAmount))
	rep, tokens := findingTokens(t, job, twice.LateRedrive(48*time.Hour))
	require.Equal(t, []string{"redrive-48h@2"}, tokens, rep.String())
	f := rep.Findings[0]
	require.Equal(t, "not idempotent: late redrive: crash after point 2 of 3 was applied (payment POST /v1/payouts (Idempotency-Key payout-restaurant-381-2026-W42)), redriven after 48h", f.Headline)
	require.Contains(t, f.Hints[0], "payout-restaurant-381-2026-W42")
	require.Contains(t, f.Hints[0], "forgot")

	rep, tokens = findingTokens(t, job, twice.LateRedrive(time.Hour))
	require.Empty(t, tokens, rep.String())
	require.Contains(t, rep.Tokens(), "redrive-1h@2")
}

func TestAmountComputedAtRunTimeNeedsStoring(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, payoutJob("payout, amount from the clock", payOnce(jobKey, lateFeeAmount)), twice.LateRedrive(time.Hour))
	require.Equal(t, []string{"redrive-1h@2"}, tokens, rep.String())
	require.Contains(t, rep.Findings[0].Hints, "the retry computed a different request (amount 85200 → 85250): store what you computed before acting on it")

	rep, tokens = findingTokens(t, payoutJob("payout, amount stored first", payOnce(jobKey, storedAmount)), twice.LateRedrive(time.Hour))
	require.Empty(t, tokens, rep.String())
}

// A webhook without any key, posted then marked in the database.
func webhookThenMark(ctx context.Context, a *twice.Attempt) error {
	var sent bool
	if err := a.Pool.QueryRow(ctx, `SELECT paid FROM payouts WHERE restaurant_id = 381`).Scan(&sent); err != nil {
		return err
	}
	if sent {
		return nil
	}
	if err := a.Webhooks.Post(ctx, "https://hooks.example.com/payouts", []byte(`{"restaurant":381,"event":"paid"}`)); err != nil {
		return err
	}
	_, err := a.Pool.Exec(ctx, `UPDATE payouts SET paid = true WHERE restaurant_id = 381`)
	return err
}

func TestWebhookWithoutKeyIsAcceptedOnlyAtLeastOnce(t *testing.T) {
	t.Parallel()
	job := payoutJob("webhook, then mark", webhookThenMark)
	job.Seed = twice.SeedSQL(`INSERT INTO payouts (restaurant_id, week, amount) VALUES (381, '2026-W42', 84000)`)
	rep, tokens := findingTokens(t, job)
	require.Equal(t, []string{"crash@3", "crash-after@2", "reply-lost@2", "overlap@1"}, tokens, rep.String())
	rep, tokens = findingTokens(t, job, twice.EffectPolicy(effects.KindWebhook, effects.AtLeastOnce))
	require.Empty(t, tokens, rep.String())
}
