package golangmigrator_test

import (
	"context"
	"fmt"
	"os"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/pgfixture/golangmigrator"
)

func ExampleNew() {
	ctx := context.Background()
	schema := golangmigrator.New(os.DirFS("testdata/golangmigrate")) // 000001_x.up.sql, 000001_x.down.sql, ...

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
	fmt.Println(tables) // only the up files ran
	// Output: customers orders schema_migrations
}
