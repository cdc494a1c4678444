package shop_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/examples/internal/shop"
	"github.com/twicekit/twicekit/generators"
	"github.com/twicekit/twicekit/internal/leakcheck"
	"github.com/twicekit/twicekit/pgfixture"
)

func TestMain(m *testing.M) { leakcheck.Exit(pgfixture.Main(m)) }

// TestDrawnRecordsSatisfyTheSchema inserts drawn customers and their orders
// into tables whose CHECK constraints state the documented constraints, and
// every status is one of Statuses.
func TestDrawnRecordsSatisfyTheSchema(t *testing.T) {
	db := pgfixture.New(t, pgfixture.SQL(shop.CustomerSchemaSQL, shop.OrderSchemaSQL))
	ctx := context.Background()
	byID := func(c shop.Customer) int64 { return c.ID }
	rapid.Check(t, func(rt *rapid.T) {
		customers := rapid.SliceOfNDistinct(shop.Customers(), 1, 4, byID).Draw(rt, "customers")
		var orders []shop.Order
		seen := map[int64]bool{} // order IDs are unique across customers too
		for i, c := range customers {
			for _, o := range generators.ChildrenOf(c, shop.OrdersOf, 0, 3,
				func(o shop.Order) int64 { return o.ID }).Draw(rt, "orders of customer "+string(rune('A'+i))) {
				if !slices.Contains(shop.Statuses(), o.Status) {
					rt.Fatalf("order %+v: status %q is not one of %v", o, o.Status, shop.Statuses())
				}
				if !seen[o.ID] {
					seen[o.ID] = true
					orders = append(orders, o)
				}
			}
		}
		err := pgx.BeginFunc(ctx, db.Pool(), func(tx pgx.Tx) error {
			for _, c := range customers {
				if _, err := tx.Exec(ctx, `INSERT INTO customers (id, name, email, points) VALUES ($1, $2, $3, $4)`,
					c.ID, c.Name, c.Email, c.Points); err != nil {
					return err
				}
			}
			for _, o := range orders {
				if _, err := tx.Exec(ctx, `INSERT INTO orders (id, customer_id, email, total_minor, currency, status, placed_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, o.ID, o.CustomerID, o.Email, o.Total.Minor, o.Total.Currency, o.Status, o.PlacedAt); err != nil {
					return err
				}
			}
			return errRollback
		})
		if err != errRollback {
			rt.Fatalf("drawn records do not insert: %v", err)
		}
	})
}

var errRollback = rollback{}

type rollback struct{}

func (rollback) Error() string { return "rollback" }
