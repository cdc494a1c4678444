package twice

import (
	"database/sql/driver"
	"fmt"

	"github.com/twicekit/twicekit/internal/inject"
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
	return optionFunc(func(c *config) {
		c.SQLDriver = fmt.Sprintf("SQLDriver(%q)", name)
		c.SQLOpen = func(dsn string) (driver.Connector, error) { return inject.OpenConnector(name, dsn) }
	})
}

// SQLConnector makes Attempt.DB a *sql.DB on the application's own
// database/sql connector, with the options it gives it. open gets a
// postgres:// URL of the check's database (the one SQLDriver's drivers get)
// and returns the connector, as the application builds it from its own DSN:
// lib/pq's pq.NewConnector with a notice handler or a dialer, a driver's
// connector with its own settings. The connector is wrapped as SQLDriver's
// drivers are, so its statements are points of the attempt. open must
// connect with the URL's settings (it may add its own): the check finds its
// sessions by their application_name.
//
// open is called once per worker the check makes; an error from it ends
// the check with that error.
func SQLConnector(open func(dsn string) (driver.Connector, error)) Option {
	return optionFunc(func(c *config) {
		c.SQLDriver = "SQLConnector"
		c.SQLOpen = open
	})
}
