// README:begin

package rewards_test

import (
	"context"
	"os"
	"testing"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

var schema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE points_ledger (
  id bigserial PRIMARY KEY, customer_id bigint NOT NULL, order_id bigint NOT NULL,
  reason text NOT NULL, points int NOT NULL, UNIQUE (order_id, reason));`)

// rewardOrderJob gives 50 points for an order, once: the ledger's unique
// constraint refuses the second reward, and the balance moves only with it.
func rewardOrderJob(orderID int64) twice.Job {
	return twice.Job{
		Name:   "reward order",
		Schema: schema,
		Seed:   twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`),
		Run: func(ctx context.Context, a *twice.Attempt) error {
			_, err := a.Pool.Exec(ctx, `
WITH added AS (
  INSERT INTO points_ledger (customer_id, order_id, reason, points)
  VALUES (77, $1, 'order_reward', 50)
  ON CONFLICT (order_id, reason) DO NOTHING
  RETURNING customer_id, points)
UPDATE customers c SET points = c.points + added.points
FROM added WHERE c.id = added.customer_id`, orderID)
			return err
		},
	}
}

func TestRewardOrder(t *testing.T) {
	twice.AssertIdempotent(t, rewardOrderJob(9812))
}

func TestMain(m *testing.M) { os.Exit(pgfixture.Main(m)) } // stops the test PostgreSQL at the end

// README:end
