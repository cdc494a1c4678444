package storedresults_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/examples/storedresults"
	"github.com/twicekit/twicekit/generators"
	"github.com/twicekit/twicekit/twice"
)

// Stored first, the compensation is paid once whatever the order's lateness,
// redriven an hour later or not.
func TestStoredFirstProperty(t *testing.T) {
	// The check's clock starts at 09:00 UTC on 12 October 2026.
	clock := time.Date(2026, time.October, 12, 9, 0, 0, 0, time.UTC)
	rapid.Check(t, func(rt *rapid.T) {
		id := generators.IDs().Draw(rt, "order")
		promised := generators.TimesIn(clock.Add(-72*time.Hour), clock.Add(24*time.Hour), time.Minute).Draw(rt, "promised")
		twice.AssertIdempotent(rt, twice.Job{
			Name:   "stored results: stored first",
			Schema: storedresults.Schema,
			Seed: func(ctx context.Context, tx pgx.Tx) error {
				_, err := tx.Exec(ctx, `INSERT INTO orders (id, customer_id, promised_at) VALUES ($1, 77, $2)`, id, promised)
				return err
			},
			Run: storedresults.CompensateLateOrder{OrderID: id}.StoredFirst,
		}, twice.LateRedrive(time.Hour))
	})
}
