package loyalty_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/examples/loyalty"
	"github.com/twicekit/twicekit/generators"
	"github.com/twicekit/twicekit/twice"
)

// The ledger rewards any order of any customer once, whatever the balance.
func TestLedgerProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := loyalty.RewardOrder{
			CustomerID: generators.IDsBetween(1, 1000).Draw(rt, "customer"),
			OrderID:    generators.IDs().Draw(rt, "order"),
		}
		points := rapid.IntRange(0, 100_000).Draw(rt, "points")
		twice.AssertIdempotent(rt, twice.Job{
			Name:   "loyalty: ledger",
			Schema: loyalty.Schema,
			Seed:   twice.SeedSQL(fmt.Sprintf(`INSERT INTO customers (id, name, points) VALUES (%d, 'Ann', %d)`, p.CustomerID, points)),
			Run:    p.Ledger,
		})
	})
}
