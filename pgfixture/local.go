package pgfixture

import (
	"context"
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/internal/pgserver"
)

// StartLocal starts a throwaway local cluster of its own, apart from the
// [Shared] server, and returns a Server on it: the same cluster as the local
// provider's (see the package doc), with extra server settings given as
// "name=value" (for example "max_connections=20"), which win over
// pgfixture's. It is for tests whose behaviour depends on a server setting;
// most tests use [Shared] or [New]. Close stops the cluster and removes its
// directory; it also dies with the process.
func StartLocal(ctx context.Context, settings ...string) (*Server, error) {
	for _, kv := range settings {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || strings.ContainsAny(name, " \t\n") {
			return nil, fmt.Errorf("pgfixture: StartLocal: setting %q is not name=value (for example max_connections=20)", kv)
		}
	}
	srv, err := startLocalWith(ctx, settings)
	if err != nil {
		return nil, fmt.Errorf("pgfixture: StartLocal: %w", err)
	}
	return srv, nil
}

// startLocal initialises and starts a throwaway cluster and returns a
// Server on it.
func startLocal(ctx context.Context) (*Server, error) { return startLocalWith(ctx, nil) }

// startLocalWith is startLocal with extra postgres settings ("name=value").
func startLocalWith(ctx context.Context, settings []string) (*Server, error) {
	dsn, stop, err := pgserver.Local(ctx, settings)
	if err != nil {
		return nil, err
	}
	return newServerFromDSN(ctx, "local", dsn, stop)
}
