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

// Without WithContext, GORM runs its statements on context.Background():
// the check refuses them and says the job bypassed its handles.
func TestGORMWithoutItsContextIsReported(t *testing.T) {
	rep := twice.Check(t.Context(), twice.Job{Name: "gorm without WithContext", Schema: schema, Seed: seed,
		Run: func(ctx context.Context, a *twice.Attempt) error {
			db, err := openGORM(a)
			if err != nil {
				return err
			}
			return db.Model(&Customer{ID: customerID}).Update("points", gorm.Expr("points + ?", 50)).Error
		}})
	if rep.OK() || !strings.Contains(rep.String(), "bypass") {
		t.Fatalf("a GORM job without its context was not reported:\n%s", rep)
	}
}
