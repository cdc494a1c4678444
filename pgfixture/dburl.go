package pgfixture

import (
	"net/url"
	"strconv"
	"strings"
)

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
			u.RawQuery = q.Encode()
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
	u.RawQuery = q.Encode()
	return u.String()
}
