// Package batch is a story of two Temporal activities, broken and fixed,
// checked with package twicetemporal under Temporal's own semantics.
//
// SettleBatch credits each order of a batch to its restaurant's balance, one
// transaction per order, and records a heartbeat checkpoint (how many orders
// are done) so that a retry resumes where the last attempt stopped. Temporal
// retries an activity whose worker died; the retry resumes from the details
// of the last heartbeat that reached the server, which may be older than the
// last one recorded (heartbeats are throttled and die with the worker).
//
//   - Broken, unkeyed: the heartbeat follows the order's commit, but the
//     credit is an increment: a retry from the checkpoint before credits the
//     order again.
//   - Broken, checkpoint first: the credit is keyed, but the heartbeat comes
//     before the order's commit: a crash in between lets the retry skip it.
//   - Fixed: the credit is keyed by the order (a row in credited, in the
//     credit's transaction) and the heartbeat follows the commit: a retry
//     from any checkpoint credits each order once.
//
// ChargeCustomer charges a card through the payment provider. Temporal
// retries it like any activity, so the charge carries an Idempotency-Key.
//
//   - Broken: the key includes activity.GetInfo(ctx).Attempt: every retry is a
//     new charge.
//   - Fixed: the key is the workflow ID and the activity ID, which every
//     attempt of the activity shares.
package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/activity"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// Schema is the restaurants' balances, the batch's orders and the orders
// credited so far.
var Schema = pgfixture.SQL(`
CREATE TABLE balances (restaurant_id bigint PRIMARY KEY, amount_paise bigint NOT NULL);
CREATE TABLE orders (id bigint PRIMARY KEY, restaurant_id bigint NOT NULL, amount_paise bigint NOT NULL);
CREATE TABLE credited (order_id bigint PRIMARY KEY)`)

// Seed is restaurant 381 with nothing credited and three delivered orders.
var Seed = twice.SeedSQL(
	`INSERT INTO balances VALUES (381, 0)`,
	`INSERT INTO orders VALUES (9812, 381, 45000), (9813, 381, 12000), (9814, 381, 30500)`,
)

// Settlement is the batch SettleBatch settles.
type Settlement struct {
	Orders []int64
}

// Tonight is the batch of the three orders.
var Tonight = Settlement{Orders: []int64{9812, 9813, 9814}}

// Settler holds SettleBatch's handles and its two ways to be wrong.
type Settler struct {
	Pool *pgxpool.Pool
	// Unkeyed credits by increment alone.
	Unkeyed bool
	// CheckpointFirst records each heartbeat before the order's commit.
	CheckpointFirst bool
}

// SettleBatch credits each order of s from the first one its heartbeat
// details do not count as done.
func (st *Settler) SettleBatch(ctx context.Context, s Settlement) error {
	done := 0
	if activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &done); err != nil {
			return err
		}
	}
	activity.GetLogger(ctx).Info("settling", "orders", len(s.Orders), "done", done)
	for i := done; i < len(s.Orders); i++ {
		if st.CheckpointFirst {
			activity.RecordHeartbeat(ctx, i+1)
		}
		if err := st.credit(ctx, s.Orders[i]); err != nil {
			return err
		}
		if !st.CheckpointFirst {
			activity.RecordHeartbeat(ctx, i+1)
		}
	}
	return nil
}

// credit adds the order's amount to its restaurant's balance, in one
// transaction; keyed, it records the order in credited first and credits
// nothing when it was there.
func (st *Settler) credit(ctx context.Context, order int64) error {
	return pgx.BeginFunc(ctx, st.Pool, func(tx pgx.Tx) error {
		if !st.Unkeyed {
			tag, err := tx.Exec(ctx, `INSERT INTO credited VALUES ($1) ON CONFLICT DO NOTHING`, order)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE balances b SET amount_paise = b.amount_paise + o.amount_paise
FROM orders o WHERE o.id = $1 AND b.restaurant_id = o.restaurant_id`, order)
		return err
	})
}

// Charge is what ChargeCustomer charges.
type Charge struct {
	Customer    string
	AmountPaise int64
}

// OrderCharge is the charge of order 9812.
var OrderCharge = Charge{Customer: "cus_9812", AmountPaise: 45000}

// Charger holds ChargeCustomer's handles and its way to be wrong.
type Charger struct {
	HTTP     *http.Client
	Payments string // the provider's base URL
	// KeyByAttempt puts the attempt's number in the Idempotency-Key.
	KeyByAttempt bool
}

// ChargeCustomer charges the customer once per workflow and activity.
func (c *Charger) ChargeCustomer(ctx context.Context, ch Charge) (string, error) {
	info := activity.GetInfo(ctx)
	key := info.WorkflowExecution.ID + "/" + info.ActivityID
	if c.KeyByAttempt {
		key = fmt.Sprintf("%s/attempt-%d", key, info.Attempt)
	}
	body, err := json.Marshal(map[string]any{"amount": ch.AmountPaise, "currency": "INR", "customer": ch.Customer})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Payments+"/v1/charges", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("charge %s: the provider answered %s", key, resp.Status)
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	return out.ID, nil
}
