package pgfixture

import (
	"context"

	"github.com/twicekit/twicekit/internal/pgserver"
)

// startContainer starts a PostgreSQL container and returns a Server on it
// whose stop function removes the container.
func startContainer(ctx context.Context) (*Server, error) {
	dsn, stop, notes, err := pgserver.Container(ctx, scrubPassword)
	if err != nil {
		return nil, err
	}
	srv, err := newServerFromDSN(ctx, "container", dsn, stop)
	if err != nil {
		return nil, err
	}
	srv.notes = append(srv.notes, notes...)
	return srv, nil
}

// scrubPassword removes password from err's text.
func scrubPassword(password string, err error) error {
	return newScrubber(password).Error(err)
}
