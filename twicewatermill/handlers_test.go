package twicewatermill

import (
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

// The loyalty ledger as watermill handlers on the topic "orders": the same
// handlers run under the check and, in the differential suite, on a real
// watermill router with watermill-sql's subscriber and publisher.

const (
	ordersTopic   = "orders"
	receiptsTopic = "receipts"
	poisonTopic   = "poison"
)

var schema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL);
CREATE TABLE processed_orders (order_id bigint PRIMARY KEY);
CREATE TABLE seen_messages (uuid text NOT NULL);
CREATE TABLE failures (order_id bigint PRIMARY KEY, left_to_fail int NOT NULL);
` + MessagesTableSQL(receiptsTopic) + MessagesTableSQL(poisonTopic))

var seed = twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`, `INSERT INTO orders VALUES (9812, 77), (9813, 77)`)

type orderPlaced struct {
	OrderID int64 `json:"order_id"`
}

func payload(orderID int64) []byte {
	b, _ := json.Marshal(orderPlaced{OrderID: orderID})
	return b
}

func orderOf(msg *message.Message) (int64, error) {
	var p orderPlaced
	if err := json.Unmarshal(msg.Payload, &p); err != nil {
		return 0, fmt.Errorf("the message's payload: %w", err)
	}
	return p.OrderID, nil
}

const addPoints = `UPDATE customers SET points = points + 50 WHERE id = (SELECT customer_id FROM orders WHERE id = $1)`

// reward adds 50 points, unguarded: watermill-sql's ack comes after it, in
// the subscriber's own transaction.
func reward(pool *pgxpool.Pool) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		id, err := orderOf(msg)
		if err != nil {
			return err
		}
		_, err = pool.Exec(msg.Context(), addPoints, id)
		return err
	}
}

// markThenReward marks the order processed in a transaction of its own,
// then adds the points: a crash between the two loses the points.
func markThenReward(pool *pgxpool.Pool) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		ctx := msg.Context()
		id, err := orderOf(msg)
		if err != nil {
			return err
		}
		tag, err := pool.Exec(ctx, `INSERT INTO processed_orders VALUES ($1) ON CONFLICT DO NOTHING`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return nil // processed already
		}
		_, err = pool.Exec(ctx, addPoints, id)
		return err
	}
}

// markAndReward is its twin: the mark and the points in one transaction.
func markAndReward(pool *pgxpool.Pool) message.NoPublishHandlerFunc {
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

// checkThenAct looks for the message's UUID, then adds the points and
// records the UUID, in one transaction, with no unique key: two deliveries
// of one message at once would both find nothing; one after the other the
// second finds the first's. A duplicate message has another UUID.
func checkThenAct(pool *pgxpool.Pool) message.NoPublishHandlerFunc {
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

// failing fails the first n deliveries of each order (a row counts them
// down, committed at once), then adds the points once.
func failing(pool *pgxpool.Pool, n int) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		ctx := msg.Context()
		id, err := orderOf(msg)
		if err != nil {
			return err
		}
		var left int
		if err := pool.QueryRow(ctx, `INSERT INTO failures VALUES ($1, $2) ON CONFLICT (order_id) DO UPDATE SET left_to_fail = failures.left_to_fail - 1 RETURNING left_to_fail`, id, n).Scan(&left); err != nil {
			return err
		}
		if left > 0 {
			return fmt.Errorf("order %d: the payment service is down (%d more)", id, left)
		}
		return markAndReward(pool)(msg)
	}
}

// rewardWithReceipt adds the points, marks the order and publishes the
// receipt message in one transaction: watermill-sql's publisher on the
// handler's transaction, an outbox.
func rewardWithReceipt(pool *pgxpool.Pool) message.NoPublishHandlerFunc {
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
			receipt := message.NewMessage(watermill.NewUUID(), payload(id))
			receipt.SetContext(ctx)
			return pub.Publish(receiptsTopic, receipt)
		})
	}
}

// rewardThenPublish commits the points and the mark, then publishes the
// receipt through a publisher outside the transaction: no outbox.
func rewardThenPublish(pool *pgxpool.Pool, pub message.Publisher) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		if err := markAndReward(pool)(msg); err != nil {
			return err
		}
		id, _ := orderOf(msg)
		receipt := message.NewMessage(watermill.NewUUID(), payload(id))
		receipt.SetContext(msg.Context())
		return pub.Publish(receiptsTopic, receipt)
	}
}

// sendReceipt is the receipts topic's handler: it emails the customer.
func sendReceipt(mailer effects.EmailSender) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		id, err := orderOf(msg)
		if err != nil {
			return err
		}
		return mailer.Send(msg.Context(), effects.Email{To: "customer-77@example.com", Subject: fmt.Sprintf("receipt for order %d", id)})
	}
}

// handlers is the application's router: the receipts topic's handler.
func handlers(a *twice.Attempt) map[string]message.NoPublishHandlerFunc {
	return map[string]message.NoPublishHandlerFunc{receiptsTopic: sendReceipt(a.Mailer)}
}
