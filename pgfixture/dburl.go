package pgfixture

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// databaseConfig returns the connection settings of database dbname on the
// server, parsed from a connection string that names it, so that
// ConnString() of the result (and of every pool built on it) names dbname
// too, never the server's maintenance database.
func (s *Server) databaseConfig(dbname string) *pgx.ConnConfig {
	dsn := s.databaseURL(dbname)
	if !strings.HasPrefix(s.adminDSN, "postgres://") && !strings.HasPrefix(s.adminDSN, "postgresql://") {
		// A keyword/value string: the last dbname wins, every other
		// setting (sslmode, sslrootcert, options) stays as given.
		dsn = s.adminDSN + " dbname=" + quoteKeywordValue(dbname)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil { // cannot happen for a string the server was started with; keep the settings
		cfg = s.adminCfg.Copy()
		cfg.Database = dbname
		return cfg
	}
	cfg.ConnectTimeout = s.adminCfg.ConnectTimeout
	return cfg
}

// quoteKeywordValue quotes v for a keyword/value connection string.
func quoteKeywordValue(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// databaseURL returns a postgres:// URL, with the password, of database
// dbname on the server: the URL the server was given with its database
// replaced, or one built from the parsed configuration when the server was
// given a keyword/value string. Migrators connect with it.
func (s *Server) databaseURL(dbname string) string {
	if strings.HasPrefix(s.adminDSN, "postgres://") || strings.HasPrefix(s.adminDSN, "postgresql://") {
		if u, err := url.Parse(s.adminDSN); err == nil {
			u.Path = "/" + dbname
			u.RawPath = ""
			q := u.Query()
			q.Del("dbname")
			q.Del("database")
			u.RawQuery = encodeQuery(q)
			return u.String()
		}
	}
	cfg := s.adminCfg
	u := url.URL{Scheme: "postgres", Path: "/" + dbname}
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
		u.Host = joinHostPort(cfg.Host, cfg.Port)
	}
	if cfg.TLSConfig == nil {
		q.Set("sslmode", "disable")
	} else {
		q.Set("sslmode", "require")
	}
	for k, v := range cfg.RuntimeParams {
		q.Set(k, v)
	}
	u.RawQuery = encodeQuery(q)
	return u.String()
}

// encodeQuery encodes a URL's query with spaces as %20: pgx reads a "+"
// in a value as itself, so a socket directory with a space (a TMPDIR) would
// not be found. url.Values.Encode writes a "+" of the value as %2B.
func encodeQuery(q url.Values) string { return strings.ReplaceAll(q.Encode(), "+", "%20") }
