package twiceriver_test

import (
	"context"
	"fmt"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twiceriver"
)

// River's migrations applied with rivermigrate, before the application's
// own schema; the hash names River's version and migrations, so every
// schema with River shares one template per application schema.
func ExampleMigrations() {
	ctx := context.Background()
	srv, _ := pgfixture.Shared(ctx)
	schema := pgfixture.Migrations(twiceriver.Migrations(), pgfixture.SQL(`CREATE TABLE invoices (id bigint PRIMARY KEY)`))
	db, err := srv.CreateDB(ctx, schema)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close(ctx, false)
	var n int
	_ = db.Pool().QueryRow(ctx, `SELECT count(*) FROM river_migration`).Scan(&n)
	var invoices bool
	_ = db.Pool().QueryRow(ctx, `SELECT to_regclass('invoices') IS NOT NULL`).Scan(&invoices)
	fmt.Println("River migrations applied:", n, "invoices table:", invoices, "hash length:", len(twiceriver.Migrations().Hash()))
	// Output: River migrations applied: 8 invoices table: true hash length: 64
}
