// Package orderstatus is the first source document's "prefer make it so over
// do this": the courier app reports order 9812 delivered, and a job updates
// the order.
//
//   - [AdvanceJob]: "advance order 9812 to the next status". Run twice, the
//     order skips past delivered to closed, and the customer's return window
//     is gone.
//   - [MakeDeliveredJob]: "make order 9812's status delivered". Run twice, it
//     is delivered twice, which is delivered.
//
// The jobs use database/sql (Attempt.DB).
package orderstatus

import (
	"context"
	"embed"
	"fmt"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

//go:embed schema.sql
var schemaFS embed.FS

// Schema is the story's schema: orders with a status.
var Schema = pgfixture.FS(schemaFS)

// Seed is the data every scenario starts from: order 9812 out with the
// courier, order 9811 still being packed.
var Seed = twice.SeedSQL(`INSERT INTO orders (id, status) VALUES (9812, 'shipped'), (9811, 'packed')`)

// next is the order lifecycle.
var next = map[string]string{
	"placed":    "packed",
	"packed":    "shipped",
	"shipped":   "delivered",
	"delivered": "closed",
}

// Advance moves the order to the status after its current one.
func Advance(orderID int64) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		var status string
		if err := a.DB.QueryRowContext(ctx, `SELECT status FROM orders WHERE id = $1`, orderID).Scan(&status); err != nil {
			return err
		}
		to, ok := next[status]
		if !ok {
			return fmt.Errorf("order %d is %s: nothing comes after it", orderID, status)
		}
		_, err := a.DB.ExecContext(ctx, `UPDATE orders SET status = $2 WHERE id = $1`, orderID, to)
		return err
	}
}

// MakeDelivered states the outcome: the order is delivered.
func MakeDelivered(orderID int64) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		_, err := a.DB.ExecContext(ctx, `UPDATE orders SET status = 'delivered' WHERE id = $1`, orderID)
		return err
	}
}

func job(name string, run func(context.Context, *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: Schema, Seed: Seed, Run: run}
}

// AdvanceJob advances order 9812 to its next status.
func AdvanceJob() twice.Job { return job("order status: advance to next", Advance(9812)) }

// MakeDeliveredJob makes order 9812's status delivered.
func MakeDeliveredJob() twice.Job { return job("order status: make it delivered", MakeDelivered(9812)) }

// Forms lists the story's forms with what the check is expected to say.
func Forms() []story.Form {
	return []story.Form{{
		Story: "orderstatus", Name: "advance", Job: AdvanceJob(),
		Flagged: []string{"sequential", "crash@end", "duplicate-enqueue"},
		Lesson:  `"advance to the next status" is an instruction: twice is two steps`,
	}, {
		Story: "orderstatus", Name: "make-delivered", Job: MakeDeliveredJob(),
		Lesson: `"make it delivered" is an outcome: twice is still delivered`,
	}}
}
