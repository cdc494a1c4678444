package dataaccess_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/twicekit/twicekit/twice"
)

type bunCustomer struct {
	bun.BaseModel `bun:"table:customers"`
	ID            int64 `bun:",pk"`
	Points        int
}

type bunReward struct {
	bun.BaseModel `bun:"table:rewards"`
	OrderID       int64 `bun:",pk"`
	CustomerID    int64
}

// openBun opens bun on the attempt's *sql.DB. It is not closed: the
// *sql.DB is the attempt's.
func openBun(a *twice.Attempt) *bun.DB { return bun.NewDB(a.DB, pgdialect.New()) }

var bunLedger = ledger{
	broken: func(ctx context.Context, a *twice.Attempt) error {
		_, err := openBun(a).NewUpdate().Model((*bunCustomer)(nil)).
			Set("points = points + 50").Where("id = ?", customerID).Exec(ctx)
		return err
	},
	fixed: func(ctx context.Context, a *twice.Attempt) error {
		return openBun(a).RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			res, err := tx.NewInsert().Model(&bunReward{OrderID: orderID, CustomerID: customerID}).
				On("CONFLICT DO NOTHING").Exec(ctx)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return err
			}
			_, err = tx.NewUpdate().Model((*bunCustomer)(nil)).
				Set("points = points + 50").Where("id = ?", customerID).Exec(ctx)
			return err
		})
	},
}

func TestBun(t *testing.T) { checkLedger(t, "bun", bunLedger) }
