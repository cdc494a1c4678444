package dataaccess_test

import (
	"context"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/twicekit/twicekit/examples/dataaccess/ent"
	"github.com/twicekit/twicekit/twice"
)

// openEnt opens ent's client on the attempt's *sql.DB (ent's sql driver
// over it). It is not closed: the *sql.DB is the attempt's.
func openEnt(a *twice.Attempt) *ent.Client {
	return ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, a.DB)))
}

var entLedger = ledger{
	broken: func(ctx context.Context, a *twice.Attempt) error {
		return openEnt(a).Customer.UpdateOneID(customerID).AddPoints(50).Exec(ctx)
	},
	fixed: func(ctx context.Context, a *twice.Attempt) error {
		tx, err := openEnt(a).Tx(ctx)
		if err != nil {
			return err
		}
		if err := tx.Reward.Create().SetID(orderID).SetCustomerID(customerID).Exec(ctx); err != nil {
			_ = tx.Rollback()
			if ent.IsConstraintError(err) {
				return nil // rewarded already
			}
			return err
		}
		if err := tx.Customer.UpdateOneID(customerID).AddPoints(50).Exec(ctx); err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	},
}

func TestEnt(t *testing.T) { checkLedger(t, "ent", entLedger) }
