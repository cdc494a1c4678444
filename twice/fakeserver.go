package twice

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twicekit/twicekit/effects"
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
		c.effects.fakes = append(c.effects.fakes, fakeServe{name: name, serve: serve})
	})
}

// fakeServe is one ServeFake option.
type fakeServe struct {
	name  string
	serve func(c *FakeConn)
}

// FakeAddr is the host:port of fake `name` for this attempt (its worker's listener).
//
// A name no ServeFake option serves is the check's error, naming ServeFake; the address returned
// then refuses every connection (127.0.0.1:0), so the job fails at once instead of reaching
// something else.
func (a *Attempt) FakeAddr(name string) string {
	if a.fakes == nil {
		return refusedAddr
	}
	if addr, ok := a.fakes.addrs[name]; ok {
		return addr
	}
	a.fakes.trouble.add(unknownFake(name, a.fakes.addrs))
	return refusedAddr
}

// refusedAddr is an address every dial refuses at once.
const refusedAddr = "127.0.0.1:0"

func unknownFake(name string, served map[string]string) string {
	names := make([]string, 0, len(served))
	for n := range served {
		names = append(names, fmt.Sprintf("%q", n))
	}
	sort.Strings(names)
	list := "none"
	if len(names) > 0 {
		list = strings.Join(names, ", ")
	}
	return fmt.Sprintf("twice: a.FakeAddr(%q): no fake of that name is served (served: %s): pass twice.ServeFake(%q, serve) to the check", name, list, name)
}

// FakeConn is one connection to a fake, with the Effect of the attempt that owns it.
type FakeConn struct {
	net.Conn
	ctx context.Context
	rec *effects.Recorder
}

// Context ends when the check closes the fake (at the end of the check).
func (c *FakeConn) Context() context.Context {
	if c.ctx == nil {
		return context.Background()
	}
	return c.ctx
}

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
	if c.rec == nil {
		return errors.New("twice: FakeConn.Effect on a connection the check did not make: use the *FakeConn a ServeFake serve function is given")
	}
	return c.rec.Do(ctx, kind, key, payload, do)
}

// fakeTrouble collects what went wrong with the fakes of a check and its
// lanes (an unknown name, a serve that panicked or did not return): the
// check's error once it closed (Check).
type fakeTrouble struct {
	mu   sync.Mutex
	seen map[string]bool
	list []string
}

func (t *fakeTrouble) add(s string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seen[s] {
		return
	}
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	t.seen[s] = true
	t.list = append(t.list, s)
}

// err is the check's error, nil when nothing went wrong.
func (t *fakeTrouble) err() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.list) == 0 {
		return nil
	}
	return usage(errors.New(strings.Join(t.list, "\n")))
}

// fakeServers are one worker's fakes: a listener per fake, and the
// goroutines that serve their connections, all ended by close.
type fakeServers struct {
	addrs   map[string]string // the ServeFake fakes by name
	rec     *effects.Recorder // the worker's: its gate asks the worker's owner
	trouble *fakeTrouble
	ctx     context.Context
	cancel  context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners []net.Listener
	conns     map[net.Conn]struct{}
	serving   map[string]int // connections being served, by what serves them
	wg        sync.WaitGroup
}

func newFakeServers(rec *effects.Recorder, trouble *fakeTrouble) *fakeServers {
	ctx, cancel := context.WithCancel(context.Background())
	return &fakeServers{addrs: map[string]string{}, rec: rec, trouble: trouble, ctx: ctx, cancel: cancel,
		conns: map[net.Conn]struct{}{}, serving: map[string]int{}}
}

// listen serves serve on a new listener of its own and returns its address;
// what names it in the check's errors ("ServeFake(\"sms\")", "a.SMTP").
func (f *fakeServers) listen(what string, serve func(c *FakeConn)) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("twice: %s: no listener on 127.0.0.1: %w", what, err)
	}
	f.mu.Lock()
	f.listeners = append(f.listeners, ln)
	f.wg.Add(1)
	f.mu.Unlock()
	go f.accept(ln, what, serve)
	return ln.Addr().String(), nil
}

func (f *fakeServers) accept(ln net.Listener, what string, serve func(c *FakeConn)) {
	defer f.wg.Done()
	for {
		conn, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed
		}
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			_ = conn.Close()
			return
		}
		f.conns[conn] = struct{}{}
		f.serving[what]++
		f.wg.Add(1)
		f.mu.Unlock()
		go f.serveConn(conn, what, serve)
	}
}

func (f *fakeServers) serveConn(conn net.Conn, what string, serve func(c *FakeConn)) {
	defer f.wg.Done()
	defer func() {
		if p := recover(); p != nil {
			f.trouble.add(fmt.Sprintf("twice: %s: the fake's serve function panicked: %v", what, p))
		}
		_ = conn.Close()
		f.mu.Lock()
		delete(f.conns, conn)
		f.serving[what]--
		f.mu.Unlock()
	}()
	serve(&FakeConn{Conn: conn, ctx: f.ctx, rec: f.rec})
}

// fakeCloseWait is how long the check waits for the serve functions to
// return once it closed their connections.
const fakeCloseWait = graceAfterCancel

// close closes the listeners and the connections, ends the fakes' context
// and waits (at most fakeCloseWait) for every serve to return; one that
// does not is reported, not waited for.
func (f *fakeServers) close() {
	f.mu.Lock()
	f.closed = true
	for _, ln := range f.listeners {
		_ = ln.Close()
	}
	for conn := range f.conns {
		_ = conn.Close()
	}
	f.mu.Unlock()
	f.cancel()
	done := make(chan struct{})
	go func() {
		f.wg.Wait()
		close(done)
	}()
	timer := time.NewTimer(fakeCloseWait)
	defer timer.Stop()
	select {
	case <-done:
		return
	case <-timer.C:
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var stuck []string
	for what, n := range f.serving {
		if n > 0 {
			stuck = append(stuck, what)
		}
	}
	sort.Strings(stuck)
	for _, what := range stuck {
		f.trouble.add(fmt.Sprintf("twice: %s: a serve function did not return within %s of the check closing its connection: return when a read or a write on the connection fails, or when c.Context() ends", what, fakeCloseWait))
	}
}

// serveFakes makes a worker's fakes, one listener per ServeFake option,
// whose effects go through rec (the worker's recorder); they close with
// the check.
func (c *checker) serveFakes(rec *effects.Recorder) (*fakeServers, error) {
	f := newFakeServers(rec, c.fakeTrouble)
	c.onClose(f.close)
	for _, fk := range c.cfg.effects.fakes {
		switch _, dup := f.addrs[fk.name]; {
		case fk.name == "":
			return nil, usage(errors.New("twice: ServeFake: the fake needs a name (the one the job passes to a.FakeAddr)"))
		case fk.serve == nil:
			return nil, usage(fmt.Errorf("twice: ServeFake(%q): serve is nil: pass the function that serves one connection", fk.name))
		case dup:
			return nil, usage(fmt.Errorf("twice: ServeFake(%q) is given twice: give each fake one name", fk.name))
		}
		addr, err := f.listen(fmt.Sprintf("ServeFake(%q)", fk.name), fk.serve)
		if err != nil {
			return nil, err
		}
		f.addrs[fk.name] = addr
	}
	return f, nil
}
