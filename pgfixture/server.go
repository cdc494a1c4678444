package pgfixture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/internal/pgserver"
)

// Environment variables read by pgfixture.
const (
	envMode   = "TWICE_POSTGRES"     // dsn, container or local
	envDSN    = "TWICE_DATABASE_URL" // an existing server
	envKeepDB = "TWICE_KEEP_DB"      // 1 keeps every fixture database
)

// dbPrefix starts the name of every database pgfixture creates; it never
// creates, changes or drops a database without it.
const dbPrefix = "twicekit_"

// Server is one PostgreSQL server that fixture databases are created on.
type Server struct {
	mode     string
	adminCfg *pgx.ConnConfig // connects to the maintenance database, with the password
	adminDSN string          // what adminCfg was parsed from, with the password
	admin    *pgxpool.Pool
	stop     func(context.Context) error
	scrub    scrubber
	super    bool     // the role is a superuser (enables session_replication_role)
	version  int      // server_version_num
	skipped  []string // the providers tried before this one, and why each was not used
	notes    []string // what else Provenance says (container mode: Ryuk)

	limit   connLimit // what max_connections leaves for pgfixture, measured at start (under limitMu)
	limitMu sync.Mutex
	room    *connRoom // the connections of limit.room(), reserved by fixture databases and callers

	seq atomic.Int64

	mu        sync.Mutex
	closed    bool
	dbs       map[*DB]struct{}
	idle      map[string][]*DB  // schema hash -> closed databases reset and ready for reuse
	templates map[string]string // schema hash -> template name used by this server
}

// Mode reports how the server was provided: "dsn", "container" or "local".
func (s *Server) Mode() string { return s.mode }

// Provenance says which PostgreSQL this is, in one line: the mode, the
// version, the masked URL, and why the providers tried before it were not
// used (for example why container mode was skipped although Docker
// answers).
func (s *Server) Provenance() string {
	out := fmt.Sprintf("%s mode, PostgreSQL %d.%d at %s", s.mode, s.version/10000, s.version%10000, s.URL())
	for _, n := range s.notes {
		out += "; " + n
	}
	if len(s.skipped) > 0 {
		out += "; not used: " + strings.Join(s.skipped, "; ")
	}
	return out
}

// URL returns the server's maintenance connection URL with the password masked.
func (s *Server) URL() string { return configURL(s.adminCfg) }

var shared struct {
	mu  sync.Mutex
	srv *Server
	err error // a failed start is not retried by every test
}

// Shared returns the one server of this process, started on first use; it is
// safe to call from parallel tests. The provider is the one named by
// TWICE_POSTGRES (dsn, container or local); else the server of
// TWICE_DATABASE_URL when it is set (a server that cannot be used is an
// error, never a fallback); else the first that works of container and
// local. When none works the error lists every provider tried and why it
// failed.
func Shared(ctx context.Context) (*Server, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil && !shared.srv.isClosed() {
		return shared.srv, nil
	}
	if shared.err != nil {
		return nil, shared.err
	}
	srv, err := startServer(ctx)
	if err != nil {
		if ctx.Err() == nil {
			shared.err = err
		}
		return nil, err
	}
	shared.srv = srv
	return srv, nil
}

// closeShared closes the shared server if it was started.
func closeShared(ctx context.Context) error {
	shared.mu.Lock()
	srv := shared.srv
	shared.srv = nil
	shared.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close(ctx)
}

// Main is for TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgfixture.Main(m)) }
//
// It runs the tests, then closes the shared server if one was started, and
// returns the exit code (1 when the tests passed but closing failed).
func Main(m interface{ Run() int }) int {
	code := m.Run()
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if err := closeShared(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "pgfixture: closing the shared server: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

type provider struct {
	name  string
	start func(context.Context) (*Server, error)
}

var providers = []provider{
	{"dsn", startDSN},
	{"container", startContainer},
	{"local", startLocal},
}

const howToProvide = "provide PostgreSQL in one of these ways: set TWICE_DATABASE_URL=postgres://user:password@host:5432/postgres " +
	"(a server where the role may CREATE DATABASE), or start Docker (container mode; image from TWICE_POSTGRES_IMAGE), " +
	"or install PostgreSQL binaries (apt-get install postgresql); force one with TWICE_POSTGRES=dsn|container|local"

func startServer(ctx context.Context) (*Server, error) {
	forced := strings.TrimSpace(strings.ToLower(os.Getenv(envMode)))
	var removed []string
	if forced != "container" {
		removed = pgserver.ReapContainers(ctx) // container mode reaps as it starts
	}
	srv, err := startProvider(ctx, forced)
	if err == nil {
		if n := pgserver.RemovedNote(removed); n != "" {
			srv.notes = append(srv.notes, n)
		}
	}
	return srv, err
}

// startProvider starts the provider forced names, else the first that works.
func startProvider(ctx context.Context, forced string) (*Server, error) {
	if forced != "" {
		for _, p := range providers {
			if p.name == forced {
				srv, err := p.start(ctx)
				if err != nil {
					return nil, fmt.Errorf("pgfixture: TWICE_POSTGRES=%s: %w; %s", forced, err, howToProvide)
				}
				return srv, nil
			}
		}
		return nil, fmt.Errorf("pgfixture: TWICE_POSTGRES=%q is not one of dsn, container, local", forced)
	}
	if os.Getenv(envDSN) != "" {
		// A server the user named is the one the tests run on: when it
		// cannot be used, the tests fail rather than quietly run somewhere
		// else.
		srv, err := startDSN(ctx)
		if err != nil {
			return nil, fmt.Errorf("pgfixture: TWICE_DATABASE_URL is set, but its server cannot be used: %w; "+
				"fix the URL or start that server, or unset TWICE_DATABASE_URL to let the tests start their own PostgreSQL (container or local)", err)
		}
		return srv, nil
	}
	tried := []string{"dsn: TWICE_DATABASE_URL is not set"}
	for _, p := range providers {
		if p.name == "dsn" {
			continue
		}
		srv, err := p.start(ctx)
		if err == nil {
			srv.skipped = tried
			return srv, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("pgfixture: starting %s: %w", p.name, err)
		}
		tried = append(tried, p.name+": "+oneLine(err.Error()))
	}
	return nil, fmt.Errorf("pgfixture: no PostgreSQL available; tried:\n  - %s\n%s",
		strings.Join(tried, "\n  - "), howToProvide)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close drops every fixture database of this server that is not kept, drops
// the templates it built, and stops what it started (cluster or container).
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	dbs := make([]*DB, 0, len(s.dbs))
	for db := range s.dbs {
		dbs = append(dbs, db)
	}
	templates := make([]string, 0, len(s.templates))
	for hash := range s.templates {
		templates = append(templates, hash)
	}
	s.mu.Unlock()

	var errs []error
	for _, db := range dbs {
		if err := db.Close(ctx, false); err != nil {
			errs = append(errs, err)
		}
	}
	for _, hash := range templates {
		if err := s.dropTemplate(ctx, hash); err != nil {
			errs = append(errs, err)
		}
	}
	s.admin.Close()
	if s.stop != nil {
		if err := s.stop(ctx); err != nil {
			errs = append(errs, s.scrub.Error(fmt.Errorf("pgfixture: stopping %s server: %w", s.mode, err)))
		}
	}
	return errors.Join(errs...)
}

func (s *Server) forget(db *DB) {
	s.mu.Lock()
	delete(s.dbs, db)
	s.mu.Unlock()
}
