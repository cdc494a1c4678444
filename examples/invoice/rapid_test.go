package invoice_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/examples/invoice"
	"github.com/twicekit/twicekit/generators"
	"github.com/twicekit/twicekit/twice"
)

// The guarded update emails any invoice at most once.
func TestGuardedProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		id := generators.IDs().Draw(rt, "invoice")
		email := generators.Emails().Draw(rt, "email")
		amount := rapid.Int64Range(1, generators.MaxMinor).Draw(rt, "amount")
		twice.AssertIdempotent(rt, twice.Job{
			Name:   "invoice: guarded update",
			Schema: invoice.Schema,
			Seed: func(ctx context.Context, tx pgx.Tx) error {
				_, err := tx.Exec(ctx, `INSERT INTO invoices (id, email, amount_paise) VALUES ($1, $2, $3)`, id, email, amount)
				return err
			},
			Run: invoice.ProcessInvoiceEmail{InvoiceID: id}.Guarded,
		}, invoice.NormalizeSentAt, invoice.AtMostOnce)
	})
}
