package processedjobs_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/examples/internal/shop"
	"github.com/twicekit/twicekit/examples/processedjobs"
	"github.com/twicekit/twicekit/generators"
	"github.com/twicekit/twicekit/twice"
)

// Keyed by the order, the reward is given once for any order, duplicate
// enqueue included.
func TestByOrderIDProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := processedjobs.RewardOrder{
			CustomerID: generators.IDsBetween(1, 1000).Draw(rt, "customer"),
			OrderID:    generators.IDs().Draw(rt, "order"),
		}
		points := rapid.IntRange(0, shop.MaxPoints).Draw(rt, "points")
		twice.AssertIdempotent(rt, twice.Job{
			Name:   "processed_jobs: keyed by order",
			Schema: processedjobs.Schema,
			Seed:   twice.SeedSQL(fmt.Sprintf(`INSERT INTO customers (id, points) VALUES (%d, %d)`, p.CustomerID, points)),
			Run:    p.ByOrderID,
		})
	})
}
