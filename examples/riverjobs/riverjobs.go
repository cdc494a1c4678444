// Package riverjobs is the seeds' loyalty ledger and invoice email written
// as River workers (github.com/riverqueue/river), checked with
// package twiceriver under River's own delivery semantics.
//
// The loyalty reward is an increment, "add 50 points", which alone is not
// idempotent. Under River what makes it safe is where the job's completion
// commits:
//
//   - [RewardWorker] with CompleteInTx false: the points commit in the
//     worker's transaction and River completes the job after Work returns.
//     A crash between the two (or a lost completion) leaves the job running,
//     River's rescuer runs it again and the points are given twice.
//   - CompleteInTx true: the points, the follow-up email job (InsertTx) and
//     the job's completion (river.JobCompleteTx) commit in one transaction.
//     The completion is the ack: River never runs the job again once its
//     work committed, and a crash before that commit rolls all three back.
//   - FollowUpOutside: the same, but the follow-up job is inserted with
//     client.Insert before the transaction: a crash that aborts the
//     transaction leaves it inserted, and the retry inserts it again.
//
// The invoice email claims the invoice with the document's guarded update;
// [InvoiceWorker] with Guarded false leaves the guard out and sends the email
// on every run. A missing invoice is cancelled (river.JobCancel): River does
// not run it again.
package riverjobs

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

//go:embed schema.sql
var schemaFS embed.FS

// Schema is the application's schema: customers, orders, invoices.
var Schema = pgfixture.FS(schemaFS)

// Seed is the data every scenario starts from.
var Seed = twice.SeedSQL(
	`INSERT INTO customers (id, name, points) VALUES (77, 'Ann', 120), (78, 'Bob', 40)`,
	`INSERT INTO orders (id, customer_id, status) VALUES (9812, 77, 'paid')`,
	`INSERT INTO invoices (id, email, amount_paise) VALUES (381, 'billing@spice-route.example', 8400000)`)

// RewardArgs rewards an order with 50 points. River inserts it once per
// order (UniqueOpts by args): a producer's duplicate insert is skipped.
type RewardArgs struct {
	OrderID int64 `json:"order_id"`
}

// Kind is River's name of the job.
func (RewardArgs) Kind() string { return "reward_order" }

// InsertOpts makes the job unique by its args.
func (RewardArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// PointsEmailArgs is the reward's follow-up job: tell the customer.
type PointsEmailArgs struct {
	CustomerID int64 `json:"customer_id"`
	OrderID    int64 `json:"order_id"`
}

// Kind is River's name of the job.
func (PointsEmailArgs) Kind() string { return "points_email" }

// RewardWorker adds 50 points to the order's customer and enqueues the
// points email.
type RewardWorker struct {
	river.WorkerDefaults[RewardArgs]
	Pool *pgxpool.Pool
	// CompleteInTx completes the job in the work's transaction
	// (river.JobCompleteTx); false lets River complete it after Work.
	CompleteInTx bool
	// FollowUpOutside inserts the follow-up job with client.Insert before
	// the work's transaction instead of InsertTx inside it.
	FollowUpOutside bool
}

// Work is one run of the job.
func (w *RewardWorker) Work(ctx context.Context, job *river.Job[RewardArgs]) error {
	client := river.ClientFromContext[pgx.Tx](ctx)
	var customer int64
	if err := w.Pool.QueryRow(ctx, `SELECT customer_id FROM orders WHERE id = $1`, job.Args.OrderID).Scan(&customer); err != nil {
		return err
	}
	followUp := PointsEmailArgs{CustomerID: customer, OrderID: job.Args.OrderID}
	if w.FollowUpOutside {
		if _, err := client.Insert(ctx, followUp, nil); err != nil {
			return err
		}
	}
	return pgx.BeginFunc(ctx, w.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = $1`, customer); err != nil {
			return err
		}
		if !w.FollowUpOutside {
			if _, err := client.InsertTx(ctx, tx, followUp, nil); err != nil {
				return err
			}
		}
		if w.CompleteInTx {
			_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
			return err
		}
		return nil
	})
}

// InvoiceArgs emails an invoice.
type InvoiceArgs struct {
	InvoiceID int64 `json:"invoice_id"`
}

// Kind is River's name of the job.
func (InvoiceArgs) Kind() string { return "invoice_email" }

// InvoiceWorker emails an invoice once: it claims the invoice with a
// conditional update and completes the job in the same transaction, then
// sends the email only if it made the claim (at most once: a crash after
// the commit loses the email, and the check is told so with
// twice.EffectPolicy("email", effects.AtMostOnce)).
type InvoiceWorker struct {
	river.WorkerDefaults[InvoiceArgs]
	Pool   *pgxpool.Pool
	Mailer *effects.Mailer
	// Guarded claims with `AND email_sent_at IS NULL`; false marks and sends
	// on every run.
	Guarded bool
}

// Work is one run of the job.
func (w *InvoiceWorker) Work(ctx context.Context, job *river.Job[InvoiceArgs]) error {
	var email string
	var amount int64
	err := w.Pool.QueryRow(ctx, `SELECT email, amount_paise FROM invoices WHERE id = $1`, job.Args.InvoiceID).Scan(&email, &amount)
	if errors.Is(err, pgx.ErrNoRows) {
		return river.JobCancel(fmt.Errorf("invoice %d does not exist", job.Args.InvoiceID))
	}
	if err != nil {
		return err
	}
	claim := `UPDATE invoices SET email_sent_at = now() WHERE id = $1`
	if w.Guarded {
		claim += ` AND email_sent_at IS NULL`
	}
	claimed := false
	err = pgx.BeginFunc(ctx, w.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, claim, job.Args.InvoiceID)
		if err != nil {
			return err
		}
		claimed = tag.RowsAffected() == 1
		if w.Guarded {
			_, err = river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		}
		return err
	})
	if err != nil || !claimed {
		return err
	}
	return w.Mailer.Send(ctx, effects.Email{
		To:      email,
		Subject: fmt.Sprintf("Invoice %d", job.Args.InvoiceID),
		Body:    fmt.Sprintf("Amount due: ₹%d", amount/100),
	})
}
