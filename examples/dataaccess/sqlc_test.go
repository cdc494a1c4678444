package dataaccess_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/examples/dataaccess/sqlc/pgxdb"
	"github.com/twicekit/twicekit/examples/dataaccess/sqlc/stddb"
	"github.com/twicekit/twicekit/twice"
)

// sqlc's pgx/v5 flavour on the attempt's pool.
var sqlcPgxLedger = ledger{
	broken: func(ctx context.Context, a *twice.Attempt) error {
		return pgxdb.New(a.Pool).AddPoints(ctx, pgxdb.AddPointsParams{Points: 50, CustomerID: customerID})
	},
	fixed: func(ctx context.Context, a *twice.Attempt) error {
		return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
			q := pgxdb.New(tx)
			n, err := q.RecordReward(ctx, pgxdb.RecordRewardParams{OrderID: orderID, CustomerID: customerID})
			if err != nil || n == 0 {
				return err
			}
			return q.AddPoints(ctx, pgxdb.AddPointsParams{Points: 50, CustomerID: customerID})
		})
	},
}

// sqlc's database/sql flavour on the attempt's *sql.DB.
var sqlcStdLedger = ledger{
	broken: func(ctx context.Context, a *twice.Attempt) error {
		return stddb.New(a.DB).AddPoints(ctx, stddb.AddPointsParams{Points: 50, CustomerID: customerID})
	},
	fixed: func(ctx context.Context, a *twice.Attempt) error {
		tx, err := a.DB.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		q := stddb.New(a.DB).WithTx(tx)
		n, err := q.RecordReward(ctx, stddb.RecordRewardParams{OrderID: orderID, CustomerID: customerID})
		if err != nil {
			return err
		}
		if n > 0 {
			if err := q.AddPoints(ctx, stddb.AddPointsParams{Points: 50, CustomerID: customerID}); err != nil {
				return err
			}
		}
		return tx.Commit()
	},
}

func TestSQLCPgx(t *testing.T)         { checkLedger(t, "sqlc pgx/v5", sqlcPgxLedger) }
func TestSQLCDatabaseSQL(t *testing.T) { checkLedger(t, "sqlc database/sql", sqlcStdLedger) }
