package dataaccess_test

import (
	"context"
	"strings"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"

	"github.com/twicekit/twicekit/twice"
)

type Customer struct {
	ID     int64 `gorm:"primaryKey"`
	Points int
}

type Reward struct {
	OrderID    int64 `gorm:"primaryKey"`
	CustomerID int64
}

// openGORM opens GORM on the attempt's *sql.DB, once per attempt. It is
// not closed: the *sql.DB is the attempt's.
func openGORM(a *twice.Attempt) (*gorm.DB, error) {
	return gorm.Open(postgres.New(postgres.Config{Conn: a.DB}), &gorm.Config{
		SkipDefaultTransaction: true,
		Logger:                 logger.Discard,
	})
}

var gormLedger = ledger{
	broken: func(ctx context.Context, a *twice.Attempt) error {
		db, err := openGORM(a)
		if err != nil {
			return err
		}
		return db.WithContext(ctx).Model(&Customer{ID: customerID}).
			Update("points", gorm.Expr("points + ?", 50)).Error
	},
	fixed: func(ctx context.Context, a *twice.Attempt) error {
		db, err := openGORM(a)
		if err != nil {
			return err
		}
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&Reward{OrderID: orderID, CustomerID: customerID})
			if res.Error != nil || res.RowsAffected == 0 {
				return res.Error
			}
			// A nested transaction is a savepoint: the check sees it too.
			return tx.Transaction(func(tx *gorm.DB) error {
				return tx.Model(&Customer{ID: customerID}).Update("points", gorm.Expr("points + ?", 50)).Error
			})
		})
	},
}

func TestGORM(t *testing.T) { checkLedger(t, "gorm", gormLedger) }

// Without WithContext, GORM runs its statements on context.Background().
// On the attempt's handles such a statement is the attempt's (the worker
// runs one attempt at a time), so the job is checked as any other: its
// unguarded increment is flagged by sequential, and nothing is refused.
func TestGORMWithoutItsContextIsChecked(t *testing.T) {
	t.Parallel()
	rep := twice.Check(t.Context(), twice.Job{Name: "gorm without WithContext", Schema: schema, Seed: seed,
		Run: func(ctx context.Context, a *twice.Attempt) error {
			db, err := openGORM(a)
			if err != nil {
				return err
			}
			return db.Model(&Customer{ID: customerID}).Update("points", gorm.Expr("points + ?", 50)).Error
		}})
	if rep.Err != nil || rep.OK() || rep.Findings[0].Token != "sequential" || strings.Contains(rep.String(), "bypass") {
		t.Fatalf("a GORM job without its context was not checked as any other:\n%s", rep)
	}
	if !strings.Contains(rep.String(), `UPDATE "customers" SET "points"=points + $1`) {
		t.Fatalf("the timeline does not show GORM's statement:\n%s", rep)
	}
}
