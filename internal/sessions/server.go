package sessions

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"
)

// GoneCause says why err looks like a server that went away ("57P01
// terminating connection due to administrator command", "unexpected
// EOF"), or "" when it does not.
func GoneCause(err error) string {
	if err == nil {
		return ""
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return pgErr.Code + " " + pgErr.Message
		}
		return ""
	}
	for _, e := range []error{io.ErrUnexpectedEOF, syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	var netErr *net.OpError
	if errors.As(err, &netErr) {
		return netErr.Error()
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return strings.Join(strings.Fields(connErr.Error()), " ")
	}
	return ""
}

// ServerAnswers opens a new connection with cfg (the check's database's),
// and closes it. It waits at most 5 s, even when ctx has ended.
func ServerAnswers(ctx context.Context, cfg *pgx.ConnConfig) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// ClosedPool reports whether err says the pool was closed and the worker's
// pool p is.
// p is asked only then: an acquire on an open pool takes one of the
// worker's connections.
func ClosedPool(err error, p *pgxpool.Pool) bool {
	if err == nil || p == nil || !strings.Contains(err.Error(), "closed pool") {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	conn, aerr := p.Acquire(ctx)
	if aerr == nil {
		conn.Release()
		return false
	}
	return errors.Is(aerr, puddle.ErrClosedPool)
}
