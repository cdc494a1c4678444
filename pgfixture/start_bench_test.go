package pgfixture

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkServerStart measures what the first test of a binary waits for:
// a server from each provider, ready for CreateDB, then stopped. local
// runs initdb into a temporary directory and starts postgres;
// container starts one from the TWICE_POSTGRES_IMAGE image (skipped without
// Docker or the image); dsn connects to the shared server and checks the
// role.
func BenchmarkServerStart(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchStart(b, startLocal) })
	b.Run("container", func(b *testing.B) {
		ctx := context.Background()
		srv, err := startContainer(ctx)
		if err != nil {
			b.Skipf("no container: %v", err)
		}
		if err := srv.Close(ctx); err != nil {
			b.Fatal(err)
		}
		benchStart(b, startContainer)
	})
	b.Run("dsn", func(b *testing.B) {
		shared, err := Shared(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		b.Setenv(envDSN, rawAdminURL(shared))
		benchStart(b, startDSN)
	})
}

func benchStart(b *testing.B, start func(context.Context) (*Server, error)) {
	ctx := context.Background()
	for b.Loop() {
		srv, err := start(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := srv.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// rawAdminURL is the server's maintenance URL with its password.
func rawAdminURL(s *Server) string {
	cfg := s.adminCfg
	u := url.URL{Scheme: "postgres", Path: "/" + cfg.Database}
	q := url.Values{"sslmode": {"disable"}}
	if strings.HasPrefix(cfg.Host, "/") { // a local cluster's socket directory
		q.Set("host", cfg.Host)
		q.Set("port", strconv.Itoa(int(cfg.Port)))
	} else {
		u.Host = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	} else {
		u.User = url.User(cfg.User)
	}
	u.RawQuery = encodeQuery(q)
	return u.String()
}
