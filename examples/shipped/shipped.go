// Package shipped is a story of values no two runs share: a job that writes
// now() or gen_random_uuid() into a row. twice runs the clean reference
// twice, finds the columns whose values differ between the two runs, and
// compares them by shape (NULL or not, and equal where they should be) with
// no option, printing them as ‹time N› and ‹uuid N›.
//
//   - [ShipGuarded] is `UPDATE orders SET status = 'shipped', shipped_at =
//     now() WHERE id = $1 AND shipped_at IS NULL`: idempotent, and checked
//     with no option even though every run writes another time.
//   - [ShipCounting] leaves out the guard and counts the shipments: a second
//     delivery ships the order again.
//   - [SignUp] is `INSERT INTO users (email, token) VALUES ($1,
//     gen_random_uuid()) ON CONFLICT (email) DO NOTHING`: the natural key
//     keeps one user and its first token.
//   - [SignUpNoKey] inserts into a table without the unique email: a second
//     delivery signs the user up twice, with two tokens.
//
// The jobs use pgx (Attempt.Pool).
package shipped

import (
	"context"
	"embed"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

//go:embed schema.sql
var schemaFS embed.FS

// Schema is the story's schema: orders, users with a unique email, and
// signups without one.
var Schema = pgfixture.FS(schemaFS)

// Seed is the data every scenario starts from: order 11, paid, and order
// 10, shipped a while ago.
var Seed = twice.SeedSQL(`INSERT INTO orders (id, status, shipped_at, ship_count) VALUES
  (11, 'paid', NULL, 0), (10, 'shipped', '2026-10-01 08:00:00+00', 1)`)

func exec(sql string, args ...any) func(context.Context, *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		_, err := a.Pool.Exec(ctx, sql, args...)
		return err
	}
}

// ShipGuarded marks an order shipped, once: the guard finds nothing to
// update the second time.
func ShipGuarded(orderID int64) func(context.Context, *twice.Attempt) error {
	return exec(`UPDATE orders SET status = 'shipped', shipped_at = now() WHERE id = $1 AND shipped_at IS NULL`, orderID)
}

// ShipCounting marks an order shipped and counts the shipment, every time.
func ShipCounting(orderID int64) func(context.Context, *twice.Attempt) error {
	return exec(`UPDATE orders SET status = 'shipped', shipped_at = now(), ship_count = ship_count + 1 WHERE id = $1`, orderID)
}

// SignUp makes a user with a random token, once per email.
func SignUp(email string) func(context.Context, *twice.Attempt) error {
	return exec(`INSERT INTO users (email, token) VALUES ($1, gen_random_uuid()) ON CONFLICT (email) DO NOTHING`, email)
}

// SignUpNoKey makes a sign-up with a random token, every time.
func SignUpNoKey(email string) func(context.Context, *twice.Attempt) error {
	return exec(`INSERT INTO signups (email, token) VALUES ($1, gen_random_uuid())`, email)
}

func job(name string, run func(context.Context, *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: Schema, Seed: Seed, Run: run}
}

// ShipGuardedJob ships order 11 under the guard.
func ShipGuardedJob() twice.Job { return job("shipped: guarded now()", ShipGuarded(11)) }

// ShipCountingJob ships order 11 without the guard, counting.
func ShipCountingJob() twice.Job { return job("shipped: unguarded now()", ShipCounting(11)) }

// SignUpJob signs ann@example.com up under the natural key.
func SignUpJob() twice.Job { return job("shipped: sign-up, natural key", SignUp("ann@example.com")) }

// SignUpNoKeyJob signs ann@example.com up without one.
func SignUpNoKeyJob() twice.Job {
	return job("shipped: sign-up, no natural key", SignUpNoKey("ann@example.com"))
}

// Forms lists the story's forms with what the check is expected to say.
func Forms() []story.Form {
	flagged := []string{"sequential", "crash@end", "duplicate-enqueue"}
	return []story.Form{{
		Story: "shipped", Name: "unguarded-now", Job: ShipCountingJob(), Flagged: flagged,
		Lesson: "without the guard a second delivery ships again; the report prints now() as ‹time N›",
	}, {
		Story: "shipped", Name: "guarded-now", Job: ShipGuardedJob(),
		Lesson: "a guarded now() passes with no option: twice compares it by shape",
	}, {
		Story: "shipped", Name: "signup-no-key", Job: SignUpNoKeyJob(), Flagged: flagged,
		Lesson: "without a natural key a second delivery signs up again, with another ‹uuid N›",
	}, {
		Story: "shipped", Name: "signup", Job: SignUpJob(),
		Lesson: "gen_random_uuid() under a natural key passes with no option",
	}}
}
