// Package watermillorders is a loyalty service on watermill: its router
// consumes the "orders" topic from watermill-sql (the messages live in
// PostgreSQL), adds 50 points per order, and publishes a receipt that the
// "receipts" handler emails. Checked with twicewatermill, under
// watermill-sql's semantics: the ack is the subscriber's, in its own
// transaction; a publisher that retried leaves a second message under
// another UUID; the consumer group takes one message at a time.
//
//   - [MarkThenReward] marks the order processed in a transaction of its
//     own, then adds the points: a crash between the two loses the points,
//     the redelivery finding the mark. [MarkAndReward] does both in one
//     transaction.
//   - [CheckThenAct] looks for the message's UUID, then acts, with no
//     unique key: two deliveries of one message at once would race, but
//     watermill-sql never runs them at once; a duplicate message, under
//     another UUID, gives the points twice.
//   - [RewardThenPublish] publishes the receipt after the commit, through
//     a publisher outside the transaction, when the points were new: a
//     crash in between loses it (the redelivery finds the order processed).
//     [RewardWithReceipt] publishes it through watermill-sql in the
//     handler's transaction, an outbox, and the receipts handler works it.
package watermillorders

import (
	"embed"
	"encoding/json"
	"fmt"

	"github.com/ThreeDotsLabs/watermill"
	wsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

//go:embed schema.sql
var schemaFS embed.FS

// Schema is the story's schema: customers, orders, the processed orders
// and watermill-sql's table of the receipts topic.
var Schema = pgfixture.FS(schemaFS)

// Seed is the data every scenario starts from.
var Seed = twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`, `INSERT INTO orders VALUES (9812, 77)`)

// OrderPlaced is the orders topic's payload.
type OrderPlaced struct {
	OrderID int64 `json:"order_id"`
}

func orderOf(msg *message.Message) (int64, error) {
	var p OrderPlaced
	if err := json.Unmarshal(msg.Payload, &p); err != nil {
		return 0, fmt.Errorf("the message's payload: %w", err)
	}
	return p.OrderID, nil
}

const addPoints = `UPDATE customers SET points = points + 50 WHERE id = (SELECT customer_id FROM orders WHERE id = $1)`

// MarkThenReward marks the order processed, committed at once, then adds
// the points.
func MarkThenReward(pool *pgxpool.Pool) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		ctx := msg.Context()
		id, err := orderOf(msg)
		if err != nil {
			return err
		}
		tag, err := pool.Exec(ctx, `INSERT INTO processed_orders VALUES ($1) ON CONFLICT DO NOTHING`, id)
		if err != nil || tag.RowsAffected() == 0 {
			return err // or processed already
		}
		_, err = pool.Exec(ctx, addPoints, id)
		return err
	}
}

// MarkAndReward marks the order processed and adds the points in one
// transaction.
func MarkAndReward(pool *pgxpool.Pool) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		ctx := msg.Context()
		id, err := orderOf(msg)
		if err != nil {
			return err
		}
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `INSERT INTO processed_orders VALUES ($1) ON CONFLICT DO NOTHING`, id)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			_, err = tx.Exec(ctx, addPoints, id)
			return err
		})
	}
}

// CheckThenAct adds the points unless the message's UUID was seen, in one
// transaction, with no unique key on the UUID.
func CheckThenAct(pool *pgxpool.Pool) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		ctx := msg.Context()
		id, err := orderOf(msg)
		if err != nil {
			return err
		}
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var seen bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM seen_messages WHERE uuid = $1)`, msg.UUID).Scan(&seen); err != nil || seen {
				return err
			}
			if _, err := tx.Exec(ctx, addPoints, id); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO seen_messages VALUES ($1)`, msg.UUID)
			return err
		})
	}
}

// receipt is the receipts topic's message for order id.
func receipt(id int64) *message.Message {
	b, _ := json.Marshal(OrderPlaced{OrderID: id})
	return message.NewMessage(watermill.NewUUID(), b)
}

// RewardThenPublish commits the mark and the points, then, when they were
// new, publishes the receipt through pub, outside the transaction.
func RewardThenPublish(pool *pgxpool.Pool, pub message.Publisher) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		ctx := msg.Context()
		id, err := orderOf(msg)
		if err != nil {
			return err
		}
		added := false
		err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `INSERT INTO processed_orders VALUES ($1) ON CONFLICT DO NOTHING`, id)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			_, err = tx.Exec(ctx, addPoints, id)
			added = err == nil
			return err
		})
		if err != nil || !added {
			return err
		}
		r := receipt(id)
		r.SetContext(ctx)
		return pub.Publish("receipts", r)
	}
}

// RewardWithReceipt publishes the receipt through watermill-sql's
// publisher on the handler's transaction: the receipt commits with the
// points.
func RewardWithReceipt(pool *pgxpool.Pool) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		ctx := msg.Context()
		id, err := orderOf(msg)
		if err != nil {
			return err
		}
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `INSERT INTO processed_orders VALUES ($1) ON CONFLICT DO NOTHING`, id)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			if _, err := tx.Exec(ctx, addPoints, id); err != nil {
				return err
			}
			pub, err := wsql.NewPublisher(wsql.TxFromPgx(tx), wsql.PublisherConfig{SchemaAdapter: wsql.DefaultPostgreSQLSchema{}}, watermill.NopLogger{})
			if err != nil {
				return err
			}
			r := receipt(id)
			r.SetContext(ctx)
			return pub.Publish("receipts", r)
		})
	}
}

// SendReceipt is the receipts topic's handler: it emails the customer.
func SendReceipt(mailer effects.EmailSender) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		id, err := orderOf(msg)
		if err != nil {
			return err
		}
		return mailer.Send(msg.Context(), effects.Email{To: "customer-77@example.com", Subject: fmt.Sprintf("receipt for order %d", id)})
	}
}
