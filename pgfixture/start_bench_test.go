package pgfixture

import (
	"context"
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
func rawAdminURL(s *Server) string { return s.databaseURL(s.adminCfg.Database) }
