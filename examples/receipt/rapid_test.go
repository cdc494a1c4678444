package receipt_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/examples/receipt"
	"github.com/twicekit/twicekit/generators"
	"github.com/twicekit/twicekit/twice"
)

// Mark-then-send never sends a receipt twice, for any order and address.
func TestMarkThenSendProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		id := generators.IDs().Draw(rt, "order")
		email := generators.Emails().Draw(rt, "email")
		total := rapid.Int64Range(1, generators.MaxMinor).Draw(rt, "total")
		twice.AssertIdempotent(rt, twice.Job{
			Name:   "receipt: mark, then send",
			Schema: receipt.Schema,
			Seed: func(ctx context.Context, tx pgx.Tx) error {
				_, err := tx.Exec(ctx, `INSERT INTO orders (id, email, total_paise) VALUES ($1, $2, $3)`, id, email, total)
				return err
			},
			Run: receipt.SendReceipt{OrderID: id}.MarkThenSend,
		}, receipt.AtMostOnce)
	})
}
