package pgfixture_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver

	"github.com/twicekit/twicekit/pgfixture"
)

// tables prints the tables of db's public schema.
func tables(ctx context.Context, db *pgfixture.DB) string {
	var names string
	_ = db.Pool().QueryRow(ctx, `SELECT string_agg(tablename, ' ' ORDER BY tablename)
		FROM pg_tables WHERE schemaname = 'public'`).Scan(&names)
	return names
}

func ExampleMigrations() {
	ctx := context.Background()
	// The tables of a library first, then the app's migrations (a
	// directory of *.sql files here; goosemigrator.New or
	// golangmigrator.New for those tools' directories).
	schema := pgfixture.Migrations(
		pgfixture.SQL("CREATE TABLE jobs (id bigserial PRIMARY KEY, kind text NOT NULL)"),
		pgfixture.FS(os.DirFS("testdata/app")),
	)

	srv, _ := pgfixture.Shared(ctx)
	db, err := srv.CreateDB(ctx, schema)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close(ctx, false)
	fmt.Println(tables(ctx, db))
	// Output: customers jobs orders
}

func ExampleFS_otherTools() {
	ctx := context.Background()
	srv, _ := pgfixture.Shared(ctx)
	// FS would run goose's Down sections too: it refuses.
	_, err := srv.CreateDB(ctx, pgfixture.FS(os.DirFS("goosemigrator/testdata/goose")))
	fmt.Println(err)
	// Output: pgfixture: migrations look like goose's (00001_create_customers.sql has "-- +goose Up"): use goosemigrator.New(fsys) (package github.com/twicekit/twicekit/pgfixture/goosemigrator), which applies only the Up sections
}

// stamp is a migrator of one's own: anything that can build its part of
// the schema from a URL.
type stamp struct{ release string }

func (s stamp) Hash() string { return "stamp " + s.release }

func (s stamp) Migrate(ctx context.Context, url string) error {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE TABLE release (name text)"); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "INSERT INTO release VALUES ($1)", s.release)
	return err
}

func ExampleMigrator() {
	ctx := context.Background()
	schema := pgfixture.Migrations(stamp{release: "2026.12"}, pgfixture.SQL("CREATE TABLE orders (id int)"))

	srv, _ := pgfixture.Shared(ctx)
	db, err := srv.CreateDB(ctx, schema)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close(ctx, false)
	var release string
	_ = db.Pool().QueryRow(ctx, "SELECT name FROM release").Scan(&release)
	fmt.Println(tables(ctx, db), release)
	// Output: orders release 2026.12
}

func ExampleSchema_Migrate() {
	// A Schema is a Migrator: apply it to a database of your own, e.g. to
	// build a development database with the schema the tests use.
	schema := pgfixture.Migrations(pgfixture.SQL("CREATE TABLE a (id int)"), pgfixture.FS(os.DirFS("migrations")))
	if url := os.Getenv("DEV_DATABASE_URL"); url != "" {
		if err := schema.Migrate(context.Background(), url); err != nil {
			fmt.Println(err)
		}
	}
}
