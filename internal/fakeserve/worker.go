package fakeserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/twicekit/twicekit/effects"
)

// RefusedAddr is an address every dial refuses at once.
const RefusedAddr = "127.0.0.1:0"

// Fake is one ServeFake option: the fake's name and the function that
// serves one of its connections.
type Fake struct {
	Name  string
	Serve func(conn net.Conn, h *Handles)
}

// Worker is one worker's fakes: a listener per fake, and the goroutines
// that serve their connections, all ended by Close.
type Worker struct {
	addrs   map[string]string // the ServeFake fakes by name
	SMTP    string            // the SMTP server's address (smtp.go)
	h       *Handles          // its recorder's gate asks the worker's owner
	trouble *Trouble
	srv     *Servers
}

// Handles are what a fake's connections call on: the fakes' context, the
// worker's recorder, its gate and the check's log.
type Handles struct {
	ctx  context.Context
	rec  *effects.Recorder
	gate effects.Gate // the worker's, under rec, and its log: for a.SMTP's messages (smtp.go)
	log  *effects.Log
}

// NewWorker makes a worker's fakes, whose calls ask g (the worker's gate)
// and record in log; Close waits closeWait for the serve functions, and
// trouble collects what went wrong.
func NewWorker(g effects.Gate, log *effects.Log, trouble *Trouble, closeWait time.Duration) *Worker {
	w := &Worker{addrs: map[string]string{}, trouble: trouble, srv: New(trouble, closeWait)}
	w.h = &Handles{ctx: w.srv.Context(), rec: effects.NewRecorder(log, g), gate: g, log: log}
	return w
}

// Listen serves serve on a new listener of its own and returns its address;
// what names it in the check's errors ("ServeFake(\"sms\")", "a.SMTP").
func (w *Worker) Listen(what string, serve func(conn net.Conn, h *Handles)) (string, error) {
	return w.srv.Listen(what, func(conn net.Conn) { serve(conn, w.h) })
}

// Close closes the listeners and the connections, ends the fakes' context
// and waits (at most the close wait) for every serve to return; one that
// does not is reported, not waited for.
func (w *Worker) Close() { w.srv.Close() }

// Serve starts the worker's fakes: the SMTP server and one listener per
// ServeFake option. usage makes an option's mistake the user's.
func (w *Worker) Serve(fakes []Fake, usage func(error) error) error {
	smtpAddr, err := w.Listen("a.SMTP", ServeSMTP)
	if err != nil {
		return err
	}
	w.SMTP = smtpAddr
	for _, fk := range fakes {
		switch _, dup := w.addrs[fk.Name]; {
		case fk.Name == "":
			return usage(errors.New("twice: ServeFake: the fake needs a name (the one the job passes to a.FakeAddr)"))
		case fk.Serve == nil:
			return usage(fmt.Errorf("twice: ServeFake(%q): serve is nil: pass the function that serves one connection", fk.Name))
		case dup:
			return usage(fmt.Errorf("twice: ServeFake(%q) is given twice: give each fake one name", fk.Name))
		}
		addr, err := w.Listen(fmt.Sprintf("ServeFake(%q)", fk.Name), fk.Serve)
		if err != nil {
			return err
		}
		w.addrs[fk.Name] = addr
	}
	return nil
}

// Addr is the host:port of fake name on this worker. A name no ServeFake
// option serves is the check's trouble; the address returned then
// refuses every connection, as a nil *Worker's does.
func (w *Worker) Addr(name string) string {
	if w == nil {
		return RefusedAddr
	}
	if addr, ok := w.addrs[name]; ok {
		return addr
	}
	w.trouble.Add(unknownFake(name, w.addrs))
	return RefusedAddr
}

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

// Context ends when the check closes the fakes; a nil *Handles's never
// ends.
func (h *Handles) Context() context.Context {
	if h == nil || h.ctx == nil {
		return context.Background()
	}
	return h.ctx
}

// Effect performs one effect of the attempt running on the fake's worker
// at the time of the call (effects.Recorder.Do); a nil *Handles refuses it.
func (h *Handles) Effect(ctx context.Context, kind, key string, payload any, do func(ctx context.Context) error) error {
	if h == nil || h.rec == nil {
		return errors.New("twice: FakeConn.Effect on a connection the check did not make: use the *FakeConn a ServeFake serve function is given")
	}
	return h.rec.Do(ctx, kind, key, payload, do)
}
