package twice_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The jobs of the source documents, each broken and fixed, used as test cases.

var loyaltySchema = pgfixture.SQL(`
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
  points      int    NOT NULL,
  UNIQUE (order_id, reason)
);
CREATE TABLE processed_jobs (
  job_id       text PRIMARY KEY,
  processed_at timestamptz NOT NULL DEFAULT now()
);`)

var loyaltySeed = twice.SeedSQL(`INSERT INTO customers (id, name) VALUES (77, 'Ann'), (78, 'Bob')`)

func loyaltyJob(name string, run func(ctx context.Context, a *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: loyaltySchema, Seed: loyaltySeed, Run: run}
}

// "add 50 points": changing a value by an amount is not idempotent.
func incrementPoints(ctx context.Context, a *twice.Attempt) error {
	_, err := a.Pool.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = $1`, 77)
	return err
}

// ledgerCTESQL rewards customer $1 for order $2 once: the ledger's unique
// constraint refuses a second row, and the balance moves only with one.
const ledgerCTESQL = `
WITH added AS (
  INSERT INTO points_ledger (customer_id, order_id, reason, points)
  VALUES ($1, $2, 'order_reward', 50)
  ON CONFLICT (order_id, reason) DO NOTHING
  RETURNING customer_id, points
)
UPDATE customers c
SET points = c.points + added.points
FROM added
WHERE c.id = added.customer_id`

// The ledger with a unique constraint, in one statement (the first document's fix).
func ledgerCTE(ctx context.Context, a *twice.Attempt) error {
	_, err := a.Pool.Exec(ctx, ledgerCTESQL, 77, 9812)
	return err
}

// The ledger row and the balance as two statements outside a transaction: a
// crash between them loses the update for good.
func ledgerTwoStatements(ctx context.Context, a *twice.Attempt) error {
	tag, err := a.Pool.Exec(ctx, `INSERT INTO points_ledger (customer_id, order_id, reason, points)
VALUES ($1, $2, 'order_reward', 50) ON CONFLICT (order_id, reason) DO NOTHING`, 77, 9812)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	_, err = a.Pool.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = $1`, 77)
	return err
}

// The same two statements in one transaction.
func ledgerInTransaction(ctx context.Context, a *twice.Attempt) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO points_ledger (customer_id, order_id, reason, points)
VALUES ($1, $2, 'order_reward', 50) ON CONFLICT (order_id, reason) DO NOTHING`, 77, 9812)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = $1`, 77)
		return err
	})
}

// A processed_jobs table keyed by the job ID: safe for redelivery, not for a
// producer that enqueues twice.
func processedJobs(ctx context.Context, a *twice.Attempt) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO processed_jobs (job_id) VALUES ($1) ON CONFLICT DO NOTHING`, a.JobID)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = $1`, 77)
		return err
	})
}

var ordersSchema = pgfixture.SQL(`
CREATE TABLE orders (
  id              bigint PRIMARY KEY,
  email           text NOT NULL,
  status          text NOT NULL,
  receipt_sent_at timestamptz
);
CREATE TABLE invoices (
  id            bigint PRIMARY KEY,
  email         text NOT NULL,
  email_sent_at timestamptz
);`)

var ordersSeed = twice.SeedSQL(
	`INSERT INTO orders (id, email, status) VALUES (9812, 'ann@example.com', 'shipped')`,
	`INSERT INTO invoices (id, email) VALUES (381, 'billing@example.com')`)

func ordersJob(name string, run func(ctx context.Context, a *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: ordersSchema, Seed: ordersSeed, Run: run}
}

// "check receipt_sent_at, skip if set, otherwise send and then set it".
func sendThenMark(ctx context.Context, a *twice.Attempt) error {
	var sent *string
	err := a.DB.QueryRowContext(ctx, `SELECT receipt_sent_at::text FROM orders WHERE id = $1`, 9812).Scan(&sent)
	if err != nil || sent != nil {
		return err
	}
	if err := a.Mailer.Send(ctx, effects.Email{To: "ann@example.com", Subject: "Your receipt for order 9812"}); err != nil {
		return err
	}
	_, err = a.DB.ExecContext(ctx, `UPDATE orders SET receipt_sent_at = $2 WHERE id = $1`, 9812, a.Now())
	return err
}

// The second document's invoice job: a guarded conditional update, then send.
func markThenSend(ctx context.Context, a *twice.Attempt) error {
	tag, err := a.Pool.Exec(ctx, `UPDATE invoices SET email_sent_at = now() WHERE id = $1 AND email_sent_at IS NULL`, 381)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	return a.Mailer.Send(ctx, effects.Email{To: "billing@example.com", Subject: "Invoice 381"})
}

// setOrNull compares a timestamp column by whether it is set.
func setOrNull(v string) string {
	if v == "NULL" {
		return v
	}
	return "set"
}

// "Advance order 9812 to the next status" is not safe to repeat.
func advanceStatus(ctx context.Context, a *twice.Attempt) error {
	_, err := a.Pool.Exec(ctx, `UPDATE orders SET status = CASE status
  WHEN 'placed' THEN 'shipped' WHEN 'shipped' THEN 'delivered' ELSE 'closed' END WHERE id = $1`, 9812)
	return err
}

// "Make order 9812's status delivered" is.
func makeDelivered(ctx context.Context, a *twice.Attempt) error {
	_, err := a.Pool.Exec(ctx, `UPDATE orders SET status = 'delivered' WHERE id = $1`, 9812)
	return err
}

// Jobs that break the rules of the harness.

func hangs(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `SELECT 1`); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

func panics(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `SELECT 1`); err != nil {
		return err
	}
	var m map[string]int
	m["boom"]++ // assignment to entry in nil map
	return nil
}

// backgroundContext sends its email on context.Background(): a call on the
// attempt's handles without its context is the attempt running on the
// worker (contextfree_test.go, contextfree_effects_test.go), so the email is
// a point, and sending it before nothing records it is flagged.
func backgroundContext(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `UPDATE customers SET points = 50 WHERE id = $1`, 77); err != nil {
		return err
	}
	return a.Mailer.Send(context.Background(), effects.Email{To: "ann@example.com", Subject: "Your points"})
}

func failsEveryTime(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `SELECT 1`); err != nil {
		return err
	}
	if a.Number > 1 {
		return fmt.Errorf("payment provider unavailable (delivery %d)", a.Number)
	}
	return nil
}
