package fakeserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"
)

// Trouble collects what went wrong with the fakes of a check and its
// lanes (an unknown name, a serve that panicked or did not return). A nil
// *Trouble collects nothing.
type Trouble struct {
	mu   sync.Mutex
	seen map[string]bool
	list []string
}

// Add records s, once.
func (t *Trouble) Add(s string) {
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

// List is what was recorded, in order.
func (t *Trouble) List() []string {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.list...)
}

// Err is what was recorded as one error, a line each; nil when nothing
// went wrong.
func (t *Trouble) Err() error {
	list := t.List()
	if len(list) == 0 {
		return nil
	}
	return errors.New(strings.Join(list, "\n"))
}

// Servers are one worker's fakes: a listener per fake, and the goroutines
// that serve their connections, all ended by Close.
type Servers struct {
	trouble   *Trouble
	closeWait time.Duration
	ctx       context.Context
	cancel    context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners []net.Listener
	conns     map[net.Conn]struct{}
	serving   map[string]int // connections being served, by what serves them
	wg        sync.WaitGroup
}

// New makes a worker's servers; Close waits closeWait for the serve
// functions, and trouble collects what went wrong.
func New(trouble *Trouble, closeWait time.Duration) *Servers {
	ctx, cancel := context.WithCancel(context.Background())
	return &Servers{trouble: trouble, closeWait: closeWait, ctx: ctx, cancel: cancel,
		conns: map[net.Conn]struct{}{}, serving: map[string]int{}}
}

// Context ends when the servers close.
func (f *Servers) Context() context.Context { return f.ctx }

// Listen serves serve on a new listener of its own and returns its address;
// what names it in the check's errors ("ServeFake(\"sms\")", "a.SMTP").
func (f *Servers) Listen(what string, serve func(conn net.Conn)) (string, error) {
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

func (f *Servers) accept(ln net.Listener, what string, serve func(conn net.Conn)) {
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

func (f *Servers) serveConn(conn net.Conn, what string, serve func(conn net.Conn)) {
	defer f.wg.Done()
	defer func() {
		if p := recover(); p != nil {
			f.trouble.Add(fmt.Sprintf("twice: %s: the fake's serve function panicked: %v", what, p))
		}
		_ = conn.Close()
		f.mu.Lock()
		delete(f.conns, conn)
		f.serving[what]--
		f.mu.Unlock()
	}()
	serve(conn)
}

// Close closes the listeners and the connections, ends the servers'
// context and waits (at most the close wait) for every serve to return;
// one that does not is reported, not waited for.
func (f *Servers) Close() {
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
	timer := time.NewTimer(f.closeWait)
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
		f.trouble.Add(fmt.Sprintf("twice: %s: a serve function did not return within %s of the check closing its connection: return when a read or a write on the connection fails, or when c.Context() ends", what, f.closeWait))
	}
}
