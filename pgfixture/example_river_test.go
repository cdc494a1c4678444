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
