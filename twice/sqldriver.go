package twice

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// SQLDriver makes Attempt.DB a *sql.DB on the database/sql driver registered
// under name instead of pgx's, wrapped so that its statements are points of
// the attempt as pgx's are: Exec, Query, Prepare and each execution of a
// prepared statement, BEGIN, COMMIT and ROLLBACK. A crash closes the
// attempt's driver connections, so PostgreSQL aborts its open transaction;
// its later statements are refused before they reach the driver, and
// database/sql never retries them on another connection.
//
// With lib/pq:
//
//	import _ "github.com/lib/pq"
//
//	twice.AssertIdempotent(t, job, twice.SQLDriver("postgres"))
//
// The driver gets a postgres:// URL for the check's database
// (sslmode=disable unless the server is reached over TLS).
func SQLDriver(name string) Option {
	return optionFunc(func(c *config) { c.sqlDriver = name })
}

// useSQLDriver replaces the worker's *sql.DB with one on the named driver.
func (c *checker) useSQLDriver(name string) error {
	if err := c.worker.UseDriver(name, driverURL(workerConfig(c.db))); err != nil {
		return fmt.Errorf("twice: SQLDriver(%q): %w", name, err)
	}
	return nil
}

// driverURL is a postgres:// URL for cfg, with its password and runtime
// parameters, that database/sql drivers for PostgreSQL understand.
func driverURL(cfg *pgx.ConnConfig) string {
	u := url.URL{Scheme: "postgres", Path: "/" + cfg.Database}
	switch {
	case cfg.Password != "":
		u.User = url.UserPassword(cfg.User, cfg.Password)
	case cfg.User != "":
		u.User = url.User(cfg.User)
	}
	q := url.Values{}
	if strings.HasPrefix(cfg.Host, "/") {
		q.Set("host", cfg.Host)
		q.Set("port", strconv.Itoa(int(cfg.Port)))
	} else {
		u.Host = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	}
	if cfg.TLSConfig == nil {
		q.Set("sslmode", "disable")
	} else {
		q.Set("sslmode", "require")
	}
	for k, v := range cfg.RuntimeParams {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
