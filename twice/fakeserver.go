package twice

import (
	"context"
	"net"

	"github.com/twicekit/twicekit/internal/fakeserve"
)

// ServeFake serves a fake of any protocol to every attempt: each worker of the check gets a
// listener of its own on 127.0.0.1 for the fake `name`, and serve runs, on its own goroutine, for
// every connection accepted there.
//
// An app whose client is built from a host and port (a partner's SDK, a cache, a message broker)
// points it at a.FakeAddr(name) in the job, where its configuration is read. A worker runs one
// attempt at a time and the concurrent scenarios' attempts have workers of their own, so every
// call the fake makes with [FakeConn.Effect] belongs to the attempt that dialled it: it is a point
// of that attempt with every effect scenario, and its effect is compared under
// EffectPolicy(kind, …) like a.Effect's.
//
// serve reads requests from the connection and answers them, calling Effect for each one that
// changes the world. It runs concurrently for the connections of every worker (and of every
// parallel lane), and every scenario reaches it: keep no state between connections, or guard it.
// It must return when a read or a write fails or when c.Context() ends; the check closes every
// connection when it ends and waits a little for serve to return, then reports a serve that did
// not (or that panicked) as the check's error. twicekit closes the connection when serve returns.
//
// ServeFake with an empty name, a nil serve, or a name given twice is refused with the check's
// error.
func ServeFake(name string, serve func(c *FakeConn)) Option {
	return optionFunc(func(c *config) {
		c.Effects.Fakes = append(c.Effects.Fakes, fakeServe{Name: name, Serve: fakeConns(serve)})
	})
}

// fakeServe is one ServeFake option (internal/fakeserve).
type fakeServe = fakeserve.Fake

// fakeConns hands serve each connection as a *FakeConn; a nil serve stays
// nil.
func fakeConns(serve func(c *FakeConn)) func(net.Conn, *fakeserve.Handles) {
	if serve == nil {
		return nil
	}
	return func(conn net.Conn, h *fakeserve.Handles) { serve(&FakeConn{Conn: conn, h: h}) }
}

// FakeAddr is the host:port of fake `name` for this attempt (its worker's listener).
//
// A name no ServeFake option serves is the check's error, naming ServeFake; the address returned
// then refuses every connection (127.0.0.1:0), so the job fails at once instead of reaching
// something else.
func (a *Attempt) FakeAddr(name string) string { return a.fakes.Addr(name) }

// FakeConn is one connection to a fake, with the Effect of the attempt that owns it.
type FakeConn struct {
	net.Conn
	// h are the worker's fake handles: the fakes' context, the worker's
	// recorder and gate, the check's log (internal/fakeserve).
	h *fakeserve.Handles
}

// Context ends when the check closes the fake (at the end of the check).
func (c *FakeConn) Context() context.Context { return c.h.Context() }

// Effect performs one effect of the attempt running on the fake's worker at the time of the call,
// exactly as [Attempt.Effect] does: it is a point of that attempt, with every fault (a crash
// before it; crash-after@N: applied, then the attempt died; reply-lost@N: applied, and the client
// must not hear so), and kind, key and payload are recorded and compared as there. With no
// attempt running on the worker the call is refused and reported, as a call that bypassed the
// attempt's handles is.
//
// do runs at the point, when the call is let through: the fake's apply goes there (nil: nothing
// to do but record it), and an error from it means nothing was applied. The rule for a fake's
// author follows from when Effect returns an error:
//
//   - do did not run: the call was refused and nothing was applied; answer with the protocol's
//     error;
//   - do ran: the effect was applied, then the attempt died or its reply was lost; do not send the
//     success reply: close the connection, so the client sees what it sees when a server dies
//     after the apply.
func (c *FakeConn) Effect(ctx context.Context, kind, key string, payload any, do func(ctx context.Context) error) error {
	return c.h.Effect(ctx, kind, key, payload, do)
}
