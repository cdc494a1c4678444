package twice_test

import (
	"context"
	"fmt"
	"net/smtp"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The app's mailer speaks SMTP to a host and port from its configuration:
// in the check, a.SMTP.

var paymentSchema = pgfixture.SQL(`
CREATE TABLE payments (order_id bigint PRIMARY KEY, amount int NOT NULL);
CREATE TABLE receipts_sent (order_id bigint PRIMARY KEY);`)

func paymentJob(name string, run func(ctx context.Context, a *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: paymentSchema, Run: run}
}

// receiptMessage is the receipt as the app's mailer writes it.
const receiptMessage = "From: shop@example.com\r\nTo: ann@example.com\r\nSubject: Your receipt for order 9812\r\n\r\nThanks for your payment of 40 EUR.\r\n"

func sendReceipt(addr string, to ...string) error {
	if len(to) == 0 {
		to = []string{"ann@example.com"}
	}
	return smtp.SendMail(addr, nil, "shop@example.com", to, []byte(receiptMessage))
}

// smtpReceiptAfterCommit records the payment (committed), then mails the
// receipt on every delivery: a redelivery mails it again.
func smtpReceiptAfterCommit(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `INSERT INTO payments VALUES (9812, 40) ON CONFLICT DO NOTHING`); err != nil {
		return err
	}
	return sendReceipt(a.SMTP)
}

// smtpReceiptIfNew mails only when the payment is new, after its
// commit: a crash between the two loses the receipt for good.
func smtpReceiptIfNew(ctx context.Context, a *twice.Attempt) error {
	tag, err := a.Pool.Exec(ctx, `INSERT INTO payments VALUES (9812, 40) ON CONFLICT DO NOTHING`)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	return sendReceipt(a.SMTP)
}

// smtpReceiptMarkedInTx marks the receipt in the payment's
// transaction and mails it, before the COMMIT, only when the mark is new:
// the mark commits with the row, and a delivery that dies before the COMMIT
// leaves neither, so the next one mails again (at least once).
func smtpReceiptMarkedInTx(ctx context.Context, a *twice.Attempt) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO payments VALUES (9812, 40) ON CONFLICT DO NOTHING`); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO receipts_sent VALUES (9812) ON CONFLICT DO NOTHING`)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		return sendReceipt(a.SMTP)
	})
}

const receiptLabel = "email to ann@example.com: Your receipt for order 9812 (from shop@example.com)"

func TestMailOverSMTPAfterACommitIsFlagged(t *testing.T) {
	t.Parallel()
	job := paymentJob("receipt after the commit", smtpReceiptAfterCommit)
	rep, tokens := findingTokens(t, job)
	require.Contains(t, tokens, "sequential", rep.String())
	require.Contains(t, tokens, "crash-after@2", rep.String())
	require.Contains(t, tokens, "reply-lost@2", rep.String())
	f := rep.Findings[0]
	require.Equal(t, "not idempotent: sequential: the ack was lost and the same job was delivered again", f.Headline)
	want := `email ann@example.com "Your receipt for order 9812\nThanks for your payment of 40 EUR.": want 1, got 2 (exactly-once)`
	require.Equal(t, []string{want}, mismatchStrings(f.Effects))
	require.Contains(t, rep.String(), "ann@example.com")
	require.Contains(t, rep.String(), "2  "+receiptLabel)
	require.Equal(t, receiptLabel, rep.Reference.Attempts[0].Points[1].Label)
	require.Equal(t, []effects.Effect{{Kind: "email", Key: "ann@example.com", Payload: "Your receipt for order 9812\nThanks for your payment of 40 EUR.",
		Origin: effects.Origin{JobID: "job-1", Attempt: 1, Point: 2}, Seq: 1}}, rep.Reference.Effects)

	// The same seed, the same report.
	again := twice.Check(context.Background(), job)
	require.Equal(t, rep.String(), again.String())

	// Sent only when the row is new, after its commit: at least once is
	// broken by a crash between the two.
	rep, tokens = findingTokens(t, paymentJob("receipt if new, after the commit", smtpReceiptIfNew), twice.EffectPolicy("email", effects.AtLeastOnce))
	require.Contains(t, tokens, "crash@2", rep.String())
	require.Contains(t, rep.String(), `email ann@example.com "Your receipt for order 9812\nThanks for your payment of 40 EUR.": want 1, got 0 (at-least-once)`)
}

func TestMailOverSMTPMarkedInTheTransactionPasses(t *testing.T) {
	t.Parallel()
	job := paymentJob("receipt marked in the transaction", smtpReceiptMarkedInTx)
	rep := twice.Check(context.Background(), job, twice.EffectPolicy("email", effects.AtLeastOnce))
	require.True(t, rep.OK(), rep.String())
	require.Contains(t, rep.Tokens(), "crash-after@4")
	require.Contains(t, rep.Tokens(), "reply-lost@4")
	require.Equal(t, "email to ann@example.com: Your receipt for order 9812 (from shop@example.com)", rep.Reference.Attempts[0].Points[3].Label)

	// Exactly once it is not: a crash after the DATA was accepted, before
	// the COMMIT, mails twice.
	rep, tokens := findingTokens(t, job)
	require.Contains(t, tokens, "crash-after@4", rep.String())
}

// The DATA's faults as the client sees them: an SMTP error when the
// attempt crashed before it (nothing sent), a closed connection without
// the 250 once it was accepted (sent).
func TestSMTPFaultsAsTheClientSeesThem(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[int]string{} // attempt number -> SendMail's error
	job := paymentJob("receipt", func(ctx context.Context, a *twice.Attempt) error {
		if _, err := a.Pool.Exec(ctx, `INSERT INTO payments VALUES (9812, 40) ON CONFLICT DO NOTHING`); err != nil {
			return err
		}
		err := sendReceipt(a.SMTP)
		mu.Lock()
		seen[a.Number] = fmt.Sprint(err)
		mu.Unlock()
		return err
	})
	for _, c := range []struct {
		token string
		sent  int
		err   string // what attempt 1's SendMail returned
	}{
		{"crash@2", 1, `451 "4.3.0 twice: the attempt crashed before this message: nothing was sent"`},
		{"crash-after@2", 2, "EOF"},
		{"reply-lost@2", 2, "EOF"},
	} {
		clear(seen)
		rep := twice.Check(context.Background(), job, twice.Only(c.token))
		require.NoError(t, rep.Err)
		require.Len(t, rep.Scenarios, 1)
		sr := rep.Scenarios[0]
		require.Len(t, sr.Effects, c.sent, c.token)
		require.Equal(t, c.err, seen[1], c.token)
		require.Equal(t, "<nil>", seen[2], c.token)
	}
}

// One message to two recipients is one point and two emails; an email sent
// over SMTP is the same effect as the same email through a.Mailer.
func TestSMTPMailIsMailersMail(t *testing.T) {
	t.Parallel()
	quick := twice.WithoutConcurrency("the reference run shows it")
	rep := twice.Check(context.Background(), paymentJob("two recipients", func(ctx context.Context, a *twice.Attempt) error {
		return sendReceipt(a.SMTP, "ann@example.com", "accounts@example.com")
	}), quick)
	require.NoError(t, rep.Err)
	require.Len(t, rep.Reference.Attempts[0].Points, 1)
	require.Equal(t, "email to ann@example.com, accounts@example.com: Your receipt for order 9812 (from shop@example.…", rep.Reference.Attempts[0].Points[0].Label)
	require.Len(t, rep.Reference.Effects, 2)
	viaSMTP := rep.Reference.Effects[0]
	require.Equal(t, "accounts@example.com", rep.Reference.Effects[1].Key)
	require.Equal(t, viaSMTP.Origin, rep.Reference.Effects[1].Origin)

	rep = twice.Check(context.Background(), paymentJob("through a.Mailer", func(ctx context.Context, a *twice.Attempt) error {
		return a.Mailer.Send(ctx, effects.Email{To: "ann@example.com", Subject: "Your receipt for order 9812", Body: "Thanks for your payment of 40 EUR."})
	}), quick)
	require.NoError(t, rep.Err)
	viaMailer := rep.Reference.Effects[0]
	require.Equal(t, viaMailer, viaSMTP)
}

// Each attempt mails a receipt of its own: in the concurrent scenarios each
// is its own attempt's email.
func TestConcurrentAttemptsMailOverTheirOwnSMTP(t *testing.T) {
	t.Parallel()
	job := orderJob("mail from each attempt", func(ctx context.Context, a *twice.Attempt) error {
		var notified bool
		if err := a.Pool.QueryRow(ctx, `SELECT notified FROM orders WHERE id = 6735`).Scan(&notified); err != nil {
			return err
		}
		msg := fmt.Sprintf("Subject: Receipt from attempt-%d\r\n\r\nSent by attempt-%d.\r\n", a.Number, a.Number)
		if err := smtp.SendMail(a.SMTP, nil, "shop@example.com", []string{"ann@example.com"}, []byte(msg)); err != nil {
			return err
		}
		_, err := a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735`)
		return err
	})
	requireOwnEffects(t, job, twice.EffectPolicy("email", effects.AtLeastOnce))
}
