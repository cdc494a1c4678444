package goosemigrator_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"github.com/pressly/goose/v3"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/pgfixture/goosemigrator"
)

func ExampleNew() {
	ctx := context.Background()
	// A Go migration, next to the SQL files (00001_..., 00002_...): goose
	// applies it as version 3. Migrations registered with
	// goose.AddMigrationContext in init functions are applied too.
	addNames := goose.NewGoMigration(3, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "ALTER TABLE customers ADD COLUMN name text")
		return err
	}}, nil)
	schema := goosemigrator.New(os.DirFS("testdata/goose"), addNames)

	srv, _ := pgfixture.Shared(ctx)
	db, err := srv.CreateDB(ctx, schema)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close(ctx, false)
	var tables string
	_ = db.Pool().QueryRow(ctx, `SELECT string_agg(tablename, ' ' ORDER BY tablename)
		FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables)
	fmt.Println(tables) // only the Up sections ran
	// Output: customers goose_db_version orders
}
