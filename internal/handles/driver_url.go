package handles

import (
	"database/sql/driver"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// DriverURL is a postgres:// URL for cfg, with its password and runtime
// parameters, that database/sql drivers for PostgreSQL understand.
func DriverURL(cfg *pgx.ConnConfig) string {
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
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20") // pgx reads "+" as itself; a "+" of a value is %2B
	return u.String()
}

// Connector opens the database/sql connector the options name (open, set by
// the option option names, for errors) on the session cfg describes.
func Connector(open func(dsn string) (driver.Connector, error), option string, cfg *pgx.ConnConfig) (driver.Connector, error) {
	inner, err := open(DriverURL(cfg))
	if err == nil && inner == nil {
		err = fmt.Errorf("the connector is nil")
	}
	if err != nil {
		return nil, fmt.Errorf("twice: %s: %w", option, err)
	}
	return inner, nil
}
