package twicewatermill_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twicewatermill"
)

var exampleSchema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE processed_orders (order_id bigint PRIMARY KEY);`)

// newRewardHandler marks the order processed and adds the points in one
// transaction.
func newRewardHandler(pool *pgxpool.Pool) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		var p struct {
			OrderID int64 `json:"order_id"`
		}
		if err := json.Unmarshal(msg.Payload, &p); err != nil {
			return err
		}
		ctx := msg.Context()
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `INSERT INTO processed_orders VALUES ($1) ON CONFLICT DO NOTHING`, p.OrderID)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			_, err = tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
			return err
		})
	}
}

func exampleJob() twicewatermill.Job {
	return twicewatermill.Job{
		Schema:           exampleSchema,
		Seed:             twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`),
		Topic:            "orders",
		Message:          message.NewMessage("5f0c7e1a-0000-4000-8000-000000009812", []byte(`{"order_id": 9812}`)),
		NoPublishHandler: func(a *twice.Attempt) message.NoPublishHandlerFunc { return newRewardHandler(a.Pool) },
	}
}

func ExampleCheck() {
	rep := twicewatermill.Check(context.Background(), exampleJob())
	fmt.Println("idempotent:", rep.OK())
	// Output: idempotent: true
}

// AssertIdempotent in a test; the router's middleware comes with the job.
func ExampleAssertIdempotent() {
	job := exampleJob()
	job.Middleware = func(a *twice.Attempt) []message.HandlerMiddleware {
		return []message.HandlerMiddleware{middleware.Recoverer}
	}
	var t twice.TB = exampleTB{} // a *testing.T in a test
	twicewatermill.AssertIdempotent(t, job)
	fmt.Println("passed")
	// Output: passed
}

func ExampleExpectIdempotent() {
	var t twice.TB = exampleTB{}
	fmt.Println(twicewatermill.ExpectIdempotent(t, exampleJob()))
	// Output: true
}

func ExampleJob_Twice() {
	j, opts := exampleJob().Twice()
	rep := twice.Check(context.Background(), j, opts...)
	fmt.Println(rep.Job, len(rep.Findings))
	// Output: orders 0
}

// A poison queue on the attempt's publisher: the poisoned message is an
// effect of kind EffectKind.
func ExampleNewPublisher() {
	job := exampleJob()
	job.NoPublishHandler = func(*twice.Attempt) message.NoPublishHandlerFunc {
		return func(*message.Message) error { return fmt.Errorf("the payment service is down") }
	}
	job.Middleware = func(a *twice.Attempt) []message.HandlerMiddleware {
		pq, _ := middleware.PoisonQueue(twicewatermill.NewPublisher(a), "orders_poison")
		return []message.HandlerMiddleware{pq}
	}
	rep := twicewatermill.Check(context.Background(), job, twice.EffectPolicy(twicewatermill.EffectKind, effects.AtLeastOnce))
	fmt.Println(rep.Err, len(rep.Findings), rep.Reference.Effects[0].Key)
	// Output: <nil> 0 orders_poison
}

func ExampleMessagesTableSQL() {
	fmt.Print(twicewatermill.MessagesTableSQL("receipts")[:47])
	// Output: CREATE TABLE IF NOT EXISTS "watermill_receipts"
}

// exampleTB stands in for the test's *testing.T: it prints what failed.
type exampleTB struct{}

func (exampleTB) Helper()                           {}
func (exampleTB) Name() string                      { return "Example" }
func (exampleTB) Logf(string, ...any)               {}
func (exampleTB) Errorf(format string, args ...any) { fmt.Fprintf(os.Stdout, format, args...) }
func (exampleTB) Fatalf(format string, args ...any) { fmt.Fprintf(os.Stdout, format, args...) }
