// Package outboxtest is the outbox publisher of the queue adapters'
// periodic tests: a job with no retries of its own, whose next scheduled
// run is its retry. River's periodic job, asynq's periodic task and a
// Temporal Schedule's activity each wrap PublishFirst.
package outboxtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// Schema is the outbox's table.
var Schema = pgfixture.SQL(`CREATE TABLE outbox (id bigint PRIMARY KEY, amount int NOT NULL, published boolean NOT NULL DEFAULT false);`)

// Seed puts one pending event in the outbox: 1200 to pay out.
var Seed = twice.SeedSQL(`INSERT INTO outbox (id, amount) VALUES (41, 1200)`)

// PublishFirst pays out the first pending outbox event through the
// attempt's payment provider, then marks it published. With nothing
// pending it does nothing. keyed sends the payout under an Idempotency-Key
// made from the event, so that a next run paying it again is the same
// payout; without it the provider pays twice.
func PublishFirst(ctx context.Context, a *twice.Attempt, keyed bool) error {
	var id, amount int64
	err := a.Pool.QueryRow(ctx, `SELECT id, amount FROM outbox WHERE NOT published ORDER BY id LIMIT 1`).Scan(&id, &amount)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // nothing pending
	}
	if err != nil {
		return err
	}
	form := url.Values{"amount": {fmt.Sprint(amount)}, "currency": {"usd"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.Payments+"/v1/payouts", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if keyed {
		req.Header.Set("Idempotency-Key", fmt.Sprintf("outbox-%d", id))
	}
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("payout: %s", resp.Status)
	}
	_, err = a.Pool.Exec(ctx, `UPDATE outbox SET published = true WHERE id = $1`, id)
	return err
}
