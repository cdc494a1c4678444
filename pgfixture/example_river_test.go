package pgfixture_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/pgfixture"
)

// River's migrations applied with rivermigrate to a database of the test's
// own; its hash names River's version and migrations, so every schema with
// River shares one template.
func ExampleRiver() {
	ctx := context.Background()
	srv, _ := pgfixture.Shared(ctx)
	db, err := srv.CreateDB(ctx, pgfixture.SQL(`SELECT 1`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close(ctx, false)
	if err := pgfixture.River().Migrate(ctx, urlOf(db.ConnConfig())); err != nil {
		fmt.Println(err)
		return
	}
	var n int
	_ = db.Pool().QueryRow(ctx, `SELECT count(*) FROM river_migration`).Scan(&n)
	fmt.Println("River migrations applied:", n, "hash length:", len(pgfixture.River().Hash()))
	// Output: River migrations applied: 8 hash length: 64
}

// ExcludeRows leaves rows out of a snapshot: here the queue's own row of the
// job under check, while the job it enqueued stays compared.
func ExampleExcludeRows() {
	ctx := context.Background()
	srv, _ := pgfixture.Shared(ctx)
	db, err := srv.CreateDB(ctx, pgfixture.SQL(`
CREATE TABLE jobs (kind text NOT NULL, under_check bool NOT NULL DEFAULT false);
INSERT INTO jobs VALUES ('reward_order', true), ('points_email', false);`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close(ctx, false)
	snap, _ := db.Snapshot(ctx, pgfixture.ExcludeRows("jobs", "under_check"))
	fmt.Print(snap)
	// Output:
	// jobs:
	//   (kind='points_email', under_check=false)
}

// urlOf is a postgres:// URL of cfg, password included.
func urlOf(cfg *pgx.ConnConfig) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(cfg.User, cfg.Password), Path: "/" + cfg.Database}
	q := url.Values{"sslmode": {"disable"}}
	if strings.HasPrefix(cfg.Host, "/") {
		q.Set("host", cfg.Host)
		q.Set("port", strconv.Itoa(int(cfg.Port)))
	} else {
		u.Host = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	}
	u.RawQuery = q.Encode()
	return u.String()
}
