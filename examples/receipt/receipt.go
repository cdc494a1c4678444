// Package receipt is the first source document's receipt email: the email
// provider deduplicates nothing, so the job marks the order and sends the
// email, and has to choose the order of the two steps — that is, which way it
// would rather be wrong when it crashes in between:
//
//   - [SendThenMark]: check receipt_sent_at, skip if set, otherwise send and
//     then set it. A crash after the send (or a lost reply from the
//     provider) sends the receipt again: at-least-once. "For receipts, a
//     rare duplicate beats a missing receipt."
//   - [MarkThenSend]: claim the order first (a guarded update), then send. A
//     crash after the claim loses the receipt: at-most-once.
//
// Neither is exactly-once, and the check says so under its default policy.
// Declared with the policy each one implements —
// twice.EffectPolicy("email", effects.AtLeastOnce) or effects.AtMostOnce — both
// pass: the check then verifies the promise the job actually makes, under
// every crash point. The jobs use database/sql (Attempt.DB).
package receipt

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

//go:embed schema.sql
var schemaFS embed.FS

// Schema is the story's schema: orders with a receipt_sent_at column.
var Schema = pgfixture.FS(schemaFS)

// Seed is the data every scenario starts from: order 9812 waiting for its
// receipt, and order 9813 whose receipt went out yesterday.
var Seed = twice.SeedSQL(`INSERT INTO orders (id, email, total_paise, receipt_sent_at) VALUES
  (9812, 'ann@example.com', 129900, NULL),
  (9813, 'bob@example.com', 45000, '2026-10-11 18:30:00+00')`)

// SendReceipt is the job's payload.
type SendReceipt struct{ OrderID int64 }

func receiptEmail(to string, orderID, totalPaise int64) effects.Email {
	return effects.Email{
		To:      to,
		Subject: fmt.Sprintf("Your receipt for order %d", orderID),
		Body:    fmt.Sprintf("Total: ₹%d.%02d", totalPaise/100, totalPaise%100),
	}
}

// SendThenMark checks receipt_sent_at, skips the order if it is set, and
// otherwise sends the receipt and then sets it.
func (j SendReceipt) SendThenMark(ctx context.Context, a *twice.Attempt) error {
	var (
		email  string
		total  int64
		sentAt sql.NullTime
	)
	err := a.DB.QueryRowContext(ctx, `SELECT email, total_paise, receipt_sent_at FROM orders WHERE id = $1`, j.OrderID).
		Scan(&email, &total, &sentAt)
	if err != nil {
		return err
	}
	if sentAt.Valid {
		return nil // sent already
	}
	if err := a.Mailer.Send(ctx, receiptEmail(email, j.OrderID, total)); err != nil {
		return err
	}
	_, err = a.DB.ExecContext(ctx, `UPDATE orders SET receipt_sent_at = $2 WHERE id = $1`, j.OrderID, a.Now())
	return err
}

// MarkThenSend claims the order with a guarded update and sends the receipt
// only if this attempt made the claim.
func (j SendReceipt) MarkThenSend(ctx context.Context, a *twice.Attempt) error {
	var (
		email string
		total int64
	)
	err := a.DB.QueryRowContext(ctx, `UPDATE orders SET receipt_sent_at = $2
WHERE id = $1 AND receipt_sent_at IS NULL
RETURNING email, total_paise`, j.OrderID, a.Now()).Scan(&email, &total)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // claimed already: sent, or lost for good
	}
	if err != nil {
		return err
	}
	return a.Mailer.Send(ctx, receiptEmail(email, j.OrderID, total))
}

// Order9812 is the payload every form is checked with.
var Order9812 = SendReceipt{OrderID: 9812}

func job(name string, run func(context.Context, *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: Schema, Seed: Seed, Run: run}
}

// SendThenMarkJob is the send-then-mark job for order 9812.
func SendThenMarkJob() twice.Job { return job("receipt: send, then mark", Order9812.SendThenMark) }

// MarkThenSendJob is the mark-then-send job for order 9812.
func MarkThenSendJob() twice.Job { return job("receipt: mark, then send", Order9812.MarkThenSend) }

// AtLeastOnce is the policy send-then-mark implements.
var AtLeastOnce = twice.EffectPolicy("email", effects.AtLeastOnce)

// AtMostOnce is the policy mark-then-send implements.
var AtMostOnce = twice.EffectPolicy("email", effects.AtMostOnce)

// Forms lists the story's forms with what the check is expected to say.
func Forms() []story.Form {
	return []story.Form{{
		Story: "receipt", Name: "send-then-mark", Job: SendThenMarkJob(),
		Flagged: []string{"crash@3", "crash-after@2", "reply-lost@2"},
		Lesson:  "send, then mark: a crash in between sends the receipt twice, which exactly-once does not allow",
	}, {
		Story: "receipt", Name: "send-then-mark+at-least-once", Job: SendThenMarkJob(), Options: []twice.Option{AtLeastOnce},
		Lesson: "the same job, declared at-least-once: a rare duplicate receipt beats a missing one",
	}, {
		Story: "receipt", Name: "mark-then-send", Job: MarkThenSendJob(),
		Flagged: []string{"crash@2"},
		Lesson:  "mark, then send: a crash in between loses the receipt, which exactly-once does not allow",
	}, {
		Story: "receipt", Name: "mark-then-send+at-most-once", Job: MarkThenSendJob(), Options: []twice.Option{AtMostOnce},
		Lesson: "the same job, declared at-most-once: never two, sometimes none",
	}}
}
