package orderstatus_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/examples/orderstatus"
	"github.com/twicekit/twicekit/generators"
	"github.com/twicekit/twicekit/twice"
)

// "Make it delivered" is idempotent from any status the order is in.
func TestMakeDeliveredProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		id := generators.IDs().Draw(rt, "order")
		status := rapid.SampledFrom([]string{"placed", "packed", "shipped", "delivered", "closed"}).Draw(rt, "status")
		twice.AssertIdempotent(rt, twice.Job{
			Name:   "order status: make it delivered",
			Schema: orderstatus.Schema,
			Seed:   twice.SeedSQL(fmt.Sprintf(`INSERT INTO orders (id, status) VALUES (%d, '%s')`, id, status)),
			Run:    orderstatus.MakeDelivered(id),
		})
	})
}
