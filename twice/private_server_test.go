package twice_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/twicekit/twicekit/pgfixture"
)

// privateServer starts a local PostgreSQL of the test's own with extra
// settings ("max_connections=32"), stopped when the test ends, and returns
// it with a context that bounds the test. It skips when no PostgreSQL
// binaries are installed, as pgfixture.StartLocal needs them.
func privateServer(t *testing.T, settings ...string) (context.Context, *pgfixture.Server) {
	t.Helper()
	if _, err := exec.LookPath("initdb"); err != nil {
		if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) == 0 {
			t.Skip("no PostgreSQL binaries (initdb) to start a server of the test's own")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	srv, err := pgfixture.StartLocal(ctx, settings...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Errorf("stopping the test's own server: %v", err)
		}
	})
	return ctx, srv
}
