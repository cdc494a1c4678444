package dataaccess_test

import (
	"context"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/twicekit/twicekit/twice"
)

var sqlxLedger = ledger{
	broken: func(ctx context.Context, a *twice.Attempt) error {
		db := sqlx.NewDb(a.DB, "pgx")
		_, err := db.ExecContext(ctx, `UPDATE customers SET points = points + 50 WHERE id = $1`, customerID)
		return err
	},
	fixed: func(ctx context.Context, a *twice.Attempt) error {
		db := sqlx.NewDb(a.DB, "pgx")
		tx, err := db.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		var inserted []int64
		if err := tx.SelectContext(ctx, &inserted, `INSERT INTO rewards VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING order_id`, orderID, customerID); err != nil {
			return err
		}
		if len(inserted) == 0 {
			return tx.Commit()
		}
		if _, err := tx.ExecContext(ctx, `UPDATE customers SET points = points + 50 WHERE id = $1`, customerID); err != nil {
			return err
		}
		return tx.Commit()
	},
}

func TestSQLX(t *testing.T) { checkLedger(t, "sqlx", sqlxLedger) }
