package twice_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The points ledger without the unique constraint: nothing in the database
// stops a second reward.
var ledgerNoUniqueSchema = pgfixture.SQL(`
CREATE TABLE customers (
  id     bigint PRIMARY KEY,
  name   text   NOT NULL,
  points int    NOT NULL DEFAULT 0
);
CREATE TABLE points_ledger (
  id          bigserial PRIMARY KEY,
  customer_id bigint NOT NULL,
  order_id    bigint NOT NULL,
  reason      text   NOT NULL,
  points      int    NOT NULL
);`)

func ledgerNoUniqueJob(name string, run func(ctx context.Context, a *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: ledgerNoUniqueSchema, Seed: loyaltySeed, Run: run}
}

// The first document's "check, then act": SELECT, then UPDATE the balance
// and INSERT the ledger row, in one transaction.
func checkThenAct(ctx context.Context, a *twice.Attempt) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		var already bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM points_ledger WHERE order_id = $1 AND reason = 'order_reward')`, 9812).Scan(&already); err != nil || already {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = $1`, 77); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO points_ledger (customer_id, order_id, reason, points) VALUES ($1, $2, 'order_reward', 50)`, 77, 9812)
		return err
	})
}

// Read-modify-write in Go: read the balance, add in Go, write it back. With
// forUpdate the read locks the row, so the second attempt waits for the
// first to commit and then sees its ledger row.
func readModifyWrite(forUpdate bool) func(ctx context.Context, a *twice.Attempt) error {
	read := `SELECT points FROM customers WHERE id = $1`
	if forUpdate {
		read += ` FOR UPDATE`
	}
	return func(ctx context.Context, a *twice.Attempt) error {
		return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
			var points int
			if err := tx.QueryRow(ctx, read, 77).Scan(&points); err != nil {
				return err
			}
			var already bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM points_ledger WHERE order_id = $1 AND reason = 'order_reward')`, 9812).Scan(&already); err != nil || already {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE customers SET points = $2 WHERE id = $1`, 77, points+50); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO points_ledger (customer_id, order_id, reason, points) VALUES ($1, $2, 'order_reward', 50)`, 77, 9812)
			return err
		})
	}
}

// The second document's invoice job: check, then the guarded update, and
// send only when this attempt's update marked the invoice.
func guardedInvoice(ctx context.Context, a *twice.Attempt) error {
	var sent bool
	if err := a.Pool.QueryRow(ctx, `SELECT email_sent_at IS NOT NULL FROM invoices WHERE id = $1`, 381).Scan(&sent); err != nil || sent {
		return err
	}
	tag, err := a.Pool.Exec(ctx, `UPDATE invoices SET email_sent_at = now() WHERE id = $1 AND email_sent_at IS NULL`, 381)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	return a.Mailer.Send(ctx, effects.Email{To: "billing@example.com", Subject: "Invoice 381"})
}

// Its unguarded twin: check, mark, send; two workers that both checked
// before either marked both send.
func unguardedInvoice(ctx context.Context, a *twice.Attempt) error {
	var sent bool
	if err := a.Pool.QueryRow(ctx, `SELECT email_sent_at IS NOT NULL FROM invoices WHERE id = $1`, 381).Scan(&sent); err != nil || sent {
		return err
	}
	if _, err := a.Pool.Exec(ctx, `UPDATE invoices SET email_sent_at = now() WHERE id = $1`, 381); err != nil {
		return err
	}
	return a.Mailer.Send(ctx, effects.Email{To: "billing@example.com", Subject: "Invoice 381"})
}

var invoiceOpts = []twice.Option{
	twice.Normalize("invoices.email_sent_at", setOrNull),
	// mark, then send: a crash in between loses the email, which the job
	// chose over a duplicate.
	twice.EffectPolicy("email", effects.AtMostOnce),
}

// concurrentFindings returns the tokens of the concurrent scenarios that
// broke a promise, and of those that ran.
func concurrentFindings(rep *twice.Report) (found, ran []string) {
	for _, f := range rep.Findings {
		if isConcurrent(f.Token) {
			found = append(found, f.Token)
		}
	}
	for _, t := range rep.Tokens() {
		if isConcurrent(t) {
			ran = append(ran, t)
		}
	}
	return found, ran
}

func isConcurrent(t string) bool {
	return strings.HasPrefix(t, "concurrent:") || strings.HasPrefix(t, "overlap@")
}

func TestCheckThenActIsFlaggedEveryTime(t *testing.T) {
	t.Parallel()
	job := ledgerNoUniqueJob("ledger: check, then act", checkThenAct)
	rep := twice.Check(context.Background(), job)
	require.NoError(t, rep.Err)
	found, _ := concurrentFindings(rep)
	require.Equal(t, []string{"overlap@2"}, found, rep.String())
	require.Equal(t, "overlap@2", rep.Findings[0].Token, "the sequential scenarios pass: only running at once breaks it")
	t.Log(rep.String())
}
