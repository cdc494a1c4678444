package inject

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
)

// Conns is the registry of the network connections one worker dialed. A crash
// cuts them all, so PostgreSQL sees the session end: it aborts the open
// transaction and releases session and advisory locks. Exactly one attempt
// uses a worker at a time, so every connection in it belongs to that attempt.
type Conns struct {
	mu    sync.Mutex
	open  map[*conn]struct{}
	dials int
}

// NewConns returns an empty registry.
func NewConns() *Conns { return &Conns{open: make(map[*conn]struct{})} }

// Dial wraps a dial function so that every connection it makes is registered.
func (c *Conns) Dial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		w := &conn{Conn: nc, owner: c}
		c.mu.Lock()
		c.open[w] = struct{}{}
		c.dials++
		c.mu.Unlock()
		return w, nil
	}
}

// cutAllBut closes every open connection of the worker at the network
// level but those in keep.
func (c *Conns) cutAllBut(keep map[*conn]bool) {
	c.mu.Lock()
	all := make([]*conn, 0, len(c.open))
	for w := range c.open {
		if !keep[w] {
			all = append(all, w)
		}
	}
	c.mu.Unlock()
	for _, w := range all {
		w.cut()
	}
}

// Dials counts the connections dialed so far (for tests and benchmarks).
func (c *Conns) Dials() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dials
}

// Open counts the connections not yet closed.
func (c *Conns) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.open)
}

// IsCut reports whether nc is a registered connection that a crash cut (or
// that was closed).
func IsCut(nc net.Conn) bool {
	w := registered(nc)
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

// registered is the registry's connection under nc: nc itself, or the
// connection a TLS connection wraps; nil for a connection no worker dialed.
func registered(nc net.Conn) *conn {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	w, _ := nc.(*conn)
	return w
}

type conn struct {
	net.Conn
	owner  *Conns
	mu     sync.Mutex
	closed bool
	// custom: a statement sent on the session may have defined a custom
	// setting, which no reset undefines (fresh.go).
	custom bool
	armed  *armed // the statement in flight, when its reply is not passed through (implicit.go)
	in     []byte // read from the server, not yet parsed (implicit.go)
	out    []byte // parsed, not yet handed to pgx (implicit.go)
}

func (w *conn) cut() { _ = w.Close() }

func (w *conn) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	w.owner.mu.Lock()
	delete(w.owner.open, w)
	w.owner.mu.Unlock()
	return w.Conn.Close()
}
