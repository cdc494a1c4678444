package twice

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/twicekit/twicekit/effects"
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
	ctx  context.Context
	rec  *effects.Recorder
	gate effects.Gate // the worker's, under rec, and its log: for a.SMTP's messages (smtp.go)
	log  *effects.Log
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
type fakeTrouble struct{ fakeserve.Trouble }

func (t *fakeTrouble) add(s string) {
	if t == nil {
		return
	}
	t.Add(s)
}

// err is the check's error, nil when nothing went wrong.
func (t *fakeTrouble) err() error {
	if t == nil {
		return nil
	}
	list := t.List()
	if len(list) == 0 {
		return nil
	}
	return usage(errors.New(strings.Join(list, "\n")))
}

// fakeServers are one worker's fakes: a listener per fake, and the
// goroutines that serve their connections, all ended by close
// (internal/fakeserve).
type fakeServers struct {
	addrs   map[string]string // the ServeFake fakes by name
	smtp    string            // the SMTP server's (smtp.go)
	rec     *effects.Recorder // the worker's: its gate asks the worker's owner
	gate    effects.Gate      // rec's gate
	log     *effects.Log      // rec's log
	trouble *fakeTrouble
	srv     *fakeserve.Servers
}

// fakeCloseWait is how long the check waits for the serve functions to
// return once it closed their connections.
const fakeCloseWait = graceAfterCancel

func newFakeServers(g effects.Gate, log *effects.Log, trouble *fakeTrouble) *fakeServers {
	var t *fakeserve.Trouble
	if trouble != nil {
		t = &trouble.Trouble
	}
	return &fakeServers{addrs: map[string]string{}, rec: effects.NewRecorder(log, g), gate: g, log: log, trouble: trouble, srv: fakeserve.New(t, fakeCloseWait)}
}

// listen serves serve on a new listener of its own and returns its address;
// what names it in the check's errors ("ServeFake(\"sms\")", "a.SMTP").
func (f *fakeServers) listen(what string, serve func(c *FakeConn)) (string, error) {
	return f.srv.Listen(what, func(conn net.Conn) {
		serve(&FakeConn{Conn: conn, ctx: f.srv.Context(), rec: f.rec, gate: f.gate, log: f.log})
	})
}

// close closes the listeners and the connections, ends the fakes' context
// and waits (at most fakeCloseWait) for every serve to return; one that
// does not is reported, not waited for.
func (f *fakeServers) close() { f.srv.Close() }

// serveFakes makes a worker's fakes, the SMTP server and one listener per
// ServeFake option, whose calls ask g (the worker's gate) and record in the
// check's log; they close with the check.
func (c *checker) serveFakes(g effects.Gate) (*fakeServers, error) {
	f := newFakeServers(g, c.log, c.fakeTrouble)
	c.onClose(f.close)
	smtpAddr, err := f.listen("a.SMTP", serveSMTP)
	if err != nil {
		return nil, err
	}
	f.smtp = smtpAddr
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
