// Package invoice is the second source document's invoice email: load the
// invoice, skip it if email_sent_at is set, claim it with a conditional
// update, and send the email only if this attempt made the claim.
//
//   - [CheckThenMark] leaves out the guard of the update (`AND email_sent_at
//     IS NULL`) and sends whenever it ran. One delivery at a time it looks
//     fine: every sequential scenario passes. Two deliveries at once (the job
//     outlived its visibility timeout) both load the invoice, both see it
//     unsent, both mark it and both send it.
//   - [Guarded] is the document's job: `UPDATE invoices SET email_sent_at =
//     now() WHERE id = $1 AND email_sent_at IS NULL`, and send only if a row
//     was updated. PostgreSQL makes the second update wait for the first and
//     then find nothing to update. It marks before it sends, so a crash in
//     between loses the email: it is at-most-once, and is checked as such
//     with twice.EffectPolicy("email", effects.AtMostOnce).
//
// email_sent_at is set by now(), a different time in every scenario; the
// check compares it as "set or not" through [NormalizeSentAt]. The jobs use
// pgx (Attempt.Pool).
package invoice

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

//go:embed schema.sql
var schemaFS embed.FS

// Schema is the story's schema: invoices with an email_sent_at column.
var Schema = pgfixture.FS(schemaFS)

// Seed is the data every scenario starts from: invoice 381 to be emailed and
// invoice 380, emailed last week.
var Seed = twice.SeedSQL(`INSERT INTO invoices (id, email, amount_paise, email_sent_at) VALUES
  (381, 'billing@spice-route.example', 8400000, NULL),
  (380, 'billing@spice-route.example', 7950000, '2026-10-05 09:00:00+00')`)

// ProcessInvoiceEmail is the job's payload.
type ProcessInvoiceEmail struct{ InvoiceID int64 }

type invoice struct {
	email  string
	amount int64
	sent   bool
}

// load is the document's findUnique.
func (j ProcessInvoiceEmail) load(ctx context.Context, a *twice.Attempt) (invoice, error) {
	var inv invoice
	err := a.Pool.QueryRow(ctx, `SELECT email, amount_paise, email_sent_at IS NOT NULL FROM invoices WHERE id = $1`, j.InvoiceID).
		Scan(&inv.email, &inv.amount, &inv.sent)
	return inv, err
}

func (j ProcessInvoiceEmail) send(ctx context.Context, a *twice.Attempt, inv invoice) error {
	return a.Mailer.Send(ctx, effects.Email{
		To:      inv.email,
		Subject: fmt.Sprintf("Invoice %d", j.InvoiceID),
		Body:    fmt.Sprintf("Amount due: ₹%d", inv.amount/100),
	})
}

// CheckThenMark loads the invoice, skips it if it was emailed, marks it and
// sends it: the document's job without the guard on the update.
func (j ProcessInvoiceEmail) CheckThenMark(ctx context.Context, a *twice.Attempt) error {
	inv, err := j.load(ctx, a)
	if err != nil || inv.sent {
		return err // pgx.ErrNoRows too: a queue retries errors
	}
	if _, err := a.Pool.Exec(ctx, `UPDATE invoices SET email_sent_at = now() WHERE id = $1`, j.InvoiceID); err != nil {
		return err
	}
	return j.send(ctx, a, inv)
}

// Guarded is the document's job: the load, then the conditional update as
// an optimistic concurrency check, then the email only if a row was updated.
func (j ProcessInvoiceEmail) Guarded(ctx context.Context, a *twice.Attempt) error {
	inv, err := j.load(ctx, a)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && inv.sent) {
		return nil // no such invoice, or emailed already: acknowledge and discard
	}
	if err != nil {
		return err
	}
	tag, err := a.Pool.Exec(ctx, `UPDATE invoices SET email_sent_at = now() WHERE id = $1 AND email_sent_at IS NULL`, j.InvoiceID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return nil // another worker claimed it first
	}
	return j.send(ctx, a, inv)
}

// Invoice381 is the payload every form is checked with.
var Invoice381 = ProcessInvoiceEmail{InvoiceID: 381}

func job(name string, run func(context.Context, *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: Schema, Seed: Seed, Run: run}
}

// CheckThenMarkJob is the unguarded job for invoice 381.
func CheckThenMarkJob() twice.Job { return job("invoice: check, then mark", Invoice381.CheckThenMark) }

// GuardedJob is the document's job for invoice 381.
func GuardedJob() twice.Job { return job("invoice: guarded update", Invoice381.Guarded) }

// setOrNull prints a timestamp as "set" or "NULL".
func setOrNull(v string) string {
	if v == "NULL" {
		return v
	}
	return "set"
}

// NormalizeSentAt compares invoices.email_sent_at by whether it is set: now()
// is a different time in every scenario.
var NormalizeSentAt = twice.Normalize("invoices.email_sent_at", setOrNull)

// AtMostOnce is the promise the guarded job makes about its email.
var AtMostOnce = twice.EffectPolicy("email", effects.AtMostOnce)

// Forms lists the story's forms with what the check is expected to say.
func Forms() []story.Form {
	return []story.Form{{
		Story: "invoice", Name: "check-then-mark", Job: CheckThenMarkJob(),
		Options: []twice.Option{NormalizeSentAt, AtMostOnce},
		Race:    true,
		Lesson:  "without the guard, two deliveries at once both send the invoice",
	}, {
		Story: "invoice", Name: "guarded+exactly-once", Job: GuardedJob(),
		Options: []twice.Option{NormalizeSentAt},
		Flagged: []string{"crash@3"},
		Lesson:  "the guarded update marks before it sends: a crash in between loses the email, which exactly-once does not allow",
	}, {
		Story: "invoice", Name: "guarded", Job: GuardedJob(),
		Options: []twice.Option{NormalizeSentAt, AtMostOnce},
		Lesson:  "the document's guarded conditional update, declared at-most-once",
	}}
}
