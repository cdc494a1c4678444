package pgfixture

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// connectTimeout bounds the first connection to a server, so that an
// unreachable one fails well within 10 s.
const connectTimeout = 8 * time.Second

// closeTimeout bounds Main's and New's cleanup.
const closeTimeout = 2 * time.Minute

func startDSN(ctx context.Context) (*Server, error) {
	dsn := os.Getenv(envDSN)
	if dsn == "" {
		return nil, errors.New("TWICE_DATABASE_URL is not set")
	}
	return newServerFromDSN(ctx, "dsn", dsn, nil)
}

// newServerFromDSN connects to the server at adminDSN (its database is used
// only for catalog queries and CREATE/DROP DATABASE of twicekit_ databases)
// and returns a Server of the given mode. stop, if not nil, is called last by
// Close to stop whatever provides the server. The password of adminDSN never
// appears in an error.
func newServerFromDSN(ctx context.Context, mode, adminDSN string, stop func(context.Context) error) (*Server, error) {
	fail := func(err error) (*Server, error) {
		if stop != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_ = stop(sctx)
			cancel()
		}
		return nil, err
	}
	cfg, err := pgx.ParseConfig(adminDSN)
	if err != nil {
		sc := newScrubber(passwordIn(adminDSN))
		return fail(sc.Error(fmt.Errorf("cannot parse the connection string %s: %w", maskDSN(adminDSN), err)))
	}
	sc := newScrubber(cfg.Password, passwordIn(adminDSN))
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > connectTimeout {
		cfg.ConnectTimeout = connectTimeout
	}
	pcfg, err := pgxpool.ParseConfig("")
	if err != nil {
		return fail(err)
	}
	pcfg.ConnConfig = cfg.Copy()
	pcfg.MaxConns = adminPoolConns
	pcfg.MinConns = 0

	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	start := time.Now()
	pool, err := pgxpool.NewWithConfig(cctx, pcfg)
	if err == nil {
		err = pool.Ping(cctx)
		if err != nil {
			pool.Close()
		}
	}
	if err != nil {
		return fail(sc.Error(fmt.Errorf("cannot connect to %s (gave up after %s): %w; check that the server is running and reachable and that the URL is right",
			configURL(cfg), time.Since(start).Round(time.Millisecond), err)))
	}
	s := &Server{
		mode:      mode,
		adminCfg:  cfg,
		adminDSN:  adminDSN,
		admin:     pool,
		stop:      stop,
		scrub:     sc,
		dbs:       map[*DB]struct{}{},
		templates: map[string]string{},
	}
	var canCreate bool
	err = pool.QueryRow(cctx, `SELECT rolsuper, rolsuper OR rolcreatedb, current_setting('server_version_num')::int
		FROM pg_roles WHERE rolname = current_user`).Scan(&s.super, &canCreate, &s.version)
	if err != nil {
		pool.Close()
		return fail(sc.Error(fmt.Errorf("querying the role of %s: %w", configURL(cfg), err)))
	}
	if !canCreate {
		pool.Close()
		return fail(fmt.Errorf("the role %q of %s may not create databases; grant it CREATEDB (ALTER ROLE %s CREATEDB) or use another role",
			cfg.User, configURL(cfg), cfg.User))
	}
	if s.limit, err = measureConnLimit(cctx, pool, stop != nil); err != nil {
		pool.Close()
		return fail(sc.Error(fmt.Errorf("querying the connection limit of %s: %w", configURL(cfg), err)))
	}
	s.room = newConnRoom(s.limit.room(), s.dropOneIdle)
	if err := s.dropStale(cctx); err != nil {
		pool.Close()
		return fail(sc.Error(err))
	}
	return s, nil
}

// passwordIn extracts a password from a connection string without full
// parsing, for masking an unparsable string.
func passwordIn(dsn string) string {
	if m := kvPassword.FindStringSubmatch(dsn); m != nil {
		p := m[2]
		if len(p) >= 2 && p[0] == '\'' {
			p = p[1 : len(p)-1]
		}
		return p
	}
	return ""
}

func joinHostPort(host string, port uint16) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

func itoa(i int) string { return strconv.Itoa(i) }
