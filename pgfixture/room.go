package pgfixture

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ControlPoolConns is how many connections a fixture database holds for its
// control pool (Reset, Snapshot) while it lives, warm and idle included.
const ControlPoolConns = 4

// Connections pgfixture itself opens: its admin pool per server (catalog
// queries, CREATE and DROP DATABASE) and a control pool per fixture
// database. The connection a template build migrates on counts against the
// control pool of the database being created, which is not open yet then.
const (
	adminPoolConns   = 8
	controlPoolConns = ControlPoolConns
)

// Errors about the server's max_connections, for errors.Is.
var (
	// ErrConnectionLimit: a reservation (of CreateDBReserving or
	// ReserveConnections) larger than all the server has room for.
	ErrConnectionLimit = errors.New("pgfixture: over the server's connection limit")
	// ErrTooManyClients: the server refused one of pgfixture's connections
	// with "too many clients" (SQLSTATE 53300), because other clients took
	// the slots after the Server was made.
	ErrTooManyClients = errors.New("pgfixture: the server refused a connection: too many clients")
)

// connLimit is how many connections a server allows pgfixture, as measured
// when the Server was made.
type connLimit struct {
	maxConnections    int // max_connections
	superuserReserved int // superuser_reserved_connections
	roleReserved      int // reserved_connections (PostgreSQL 16+)
	otherClients      int // client connections of others at start
	adminPool         int // pgfixture's admin pool
}

// room is what is left for fixture databases and their callers.
func (l connLimit) room() int {
	return max(l.maxConnections-l.superuserReserved-l.roleReserved-l.otherClients-l.adminPool, 0)
}

// taken is what the server's other users and pgfixture's admin pool hold.
func (l connLimit) taken() int {
	return l.superuserReserved + l.roleReserved + l.otherClients + l.adminPool
}

// explain spells out how room was computed.
func (l connLimit) explain() string {
	parts := []string{fmt.Sprintf("%d reserved for superusers", l.superuserReserved)}
	if l.roleReserved > 0 {
		parts = append(parts, fmt.Sprintf("%d reserved for pg_use_reserved_connections", l.roleReserved))
	}
	parts = append(parts, fmt.Sprintf("%d held by other clients at start", l.otherClients))
	return fmt.Sprintf("max_connections=%d, minus %s and %d for pgfixture's admin pool",
		l.maxConnections, strings.Join(parts, ", "), l.adminPool)
}

// measureConnLimit reads the server's connection settings and counts the
// client connections of others (every client backend but pool's own). When
// settle is set (a server pgfixture just started, whose readiness probe may
// still be disconnecting) it looks again for up to a second until nobody
// else is connected.
func measureConnLimit(ctx context.Context, pool *pgxpool.Pool, settle bool) (connLimit, error) {
	l := connLimit{adminPool: adminPoolConns}
	deadline := time.Now().Add(time.Second)
	for {
		var clients int
		// Other roles' sessions show no backend_type to an unprivileged
		// role; those connected to a database are counted as clients.
		err := pool.QueryRow(ctx, `SELECT current_setting('max_connections')::int,
			current_setting('superuser_reserved_connections')::int,
			coalesce(nullif(current_setting('reserved_connections', true), ''), '0')::int,
			(SELECT count(*) FROM pg_stat_activity
			 WHERE backend_type = 'client backend' OR (backend_type IS NULL AND datid IS NOT NULL))::int`).
			Scan(&l.maxConnections, &l.superuserReserved, &l.roleReserved, &clients)
		if err != nil {
			return l, fmt.Errorf("reading max_connections: %w", err)
		}
		l.otherClients = max(clients-int(pool.Stat().TotalConns()), 0)
		if !settle || l.otherClients == 0 || time.Now().After(deadline) {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return l, nil
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// limitError is a reservation the server can never meet.
type limitError struct{ msg string }

func (e *limitError) Error() string        { return e.msg }
func (e *limitError) Is(target error) bool { return target == ErrConnectionLimit }

// refusedError is PostgreSQL's "too many clients", explained.
type refusedError struct {
	msg string
	err error
}

func (e *refusedError) Error() string   { return e.msg }
func (e *refusedError) Unwrap() []error { return []error{ErrTooManyClients, e.err} }

// ReserveConnections reserves n connections of the server's room for
// connections the caller is about to open to a fixture database. It returns
// the function that gives them back; call it once those connections are
// closed (calling it again does nothing). what names the caller in errors.
//
// Free connections are reserved at once. Otherwise it drops warm idle
// databases first, then waits in line (first come, first served) until
// enough are given back or ctx is done. When n is more than the whole room,
// it fails at once with an error that names the numbers and the fix
// (errors.Is(err, ErrConnectionLimit)).
//
// The room is measured when the Server is made. It is max_connections,
// minus the reserved connections (superuser_reserved_connections,
// reserved_connections), minus the client connections others held then,
// minus pgfixture's admin pool (8). Every fixture database holds 4 of it
// for its control pool while it lives, warm and idle ones included.
//
// Do not call it while you hold a reservation or a fixture database of the
// same server: two callers that each hold some and wait for more can wait
// for each other. [Server.CreateDBReserving] reserves a database and its
// connections at once.
func (s *Server) ReserveConnections(ctx context.Context, n int, what string) (release func(), err error) {
	if n <= 0 {
		return func() {}, nil
	}
	if s.isClosed() {
		return nil, errors.New("pgfixture: ReserveConnections on a closed server")
	}
	r, err := s.reserve(ctx, n, what, "")
	if err != nil {
		return nil, err
	}
	return r.release, nil
}

// reserve takes n slots of the server's room for what; detail, if not
// empty, says in the error what the n are made of.
func (s *Server) reserve(ctx context.Context, n int, what, detail string) (*slots, error) {
	if n > s.room.capacity() {
		s.remeasure(ctx)
		if n > s.room.capacity() {
			return nil, s.tooMany(n, what, detail)
		}
	}
	if err := s.room.acquire(ctx, n); err != nil {
		return nil, fmt.Errorf("pgfixture: %s gave up waiting for %d of the %d connections the server at %s has room for (%d were reserved by other fixture databases and checks): %w",
			what, n, s.room.capacity(), s.URL(), s.room.inUse(), err)
	}
	return &slots{b: s.room, n: n}, nil
}

// remeasure looks at the server again when a request is larger than the
// room measured before: clients that were connected then may have gone
// since (another test binary that has finished). Every connection this
// server's reservations may hold is taken to be pgfixture's own, not
// another client's. The room only grows.
func (s *Server) remeasure(ctx context.Context) {
	if s.admin == nil {
		return // a Server made by hand in a unit test
	}
	l, err := measureConnLimit(ctx, s.admin, false)
	if err != nil {
		return // the request fails with the room measured before
	}
	s.limitMu.Lock()
	defer s.limitMu.Unlock()
	l.otherClients = max(l.otherClients-s.room.inUse(), 0)
	if l.room() > s.room.capacity() {
		s.limit = l
		s.room.grow(l.room())
	}
}

// connLimit returns the limit the room was last measured with.
func (s *Server) connLimit() connLimit {
	s.limitMu.Lock()
	defer s.limitMu.Unlock()
	return s.limit
}

// tooMany is the error of a reservation larger than the server's room.
func (s *Server) tooMany(n int, what, detail string) error {
	l := s.connLimit()
	need := n + l.taken()
	if detail != "" {
		detail = " (" + detail + ")"
	}
	msg := fmt.Sprintf("pgfixture: %s may open up to %d connections%s but the server at %s has room for %d (%s); "+
		"raise max_connections to at least %d (postgres -c max_connections=%d, or ALTER SYSTEM SET max_connections = %d and restart the server)",
		what, n, detail, s.URL(), l.room(), l.explain(), need, need, need)
	if l.otherClients > 0 {
		msg += fmt.Sprintf(", or close some of the %d other client connections", l.otherClients)
	}
	return &limitError{msg: msg}
}

// ExplainRefused is for callers that open connections to a fixture
// database themselves (twice's workers): when err is, or wraps,
// PostgreSQL's "too many clients" (SQLSTATE 53300), it returns an error that
// says which limit was hit and what to do (errors.Is(err,
// ErrTooManyClients)); any other error is returned as it is.
func (s *Server) ExplainRefused(err error) error { return s.explainRefused(err) }

// explainRefused turns PostgreSQL's "too many clients" (SQLSTATE 53300)
// into an error that says which limit was hit and what to do; any other
// error is returned as it is.
func (s *Server) explainRefused(err error) error {
	var pgErr *pgconn.PgError
	if err == nil || errors.Is(err, ErrTooManyClients) || !errors.As(err, &pgErr) || pgErr.Code != "53300" {
		return err
	}
	msg := fmt.Sprintf("pgfixture: the server at %s refused a connection: %s (SQLSTATE 53300). "+
		"pgfixture keeps within the %d connections it had room for at start (%s), so other clients connected since "+
		"(another test binary on the same server? go test runs packages in parallel); "+
		"raise max_connections (postgres -c max_connections=N, or ALTER SYSTEM SET max_connections = N and restart the server), "+
		"close the other clients, or run fewer checks at once (go test -parallel N, -p N)",
		s.URL(), pgErr.Message, s.room.capacity(), s.connLimit().explain())
	return &refusedError{msg: s.scrub.String(msg + "; the error was: " + err.Error()), err: err}
}

// connRoom is a weighted semaphore over the connection slots of one
// server that pgfixture and its callers may use. It is FIFO: a request that
// cannot be met waits in line, and nobody overtakes it, so a large request
// (a whole check's connections) is not starved by a stream of small ones
// (fixture databases' control pools). Waiting respects the caller's context.
type connRoom struct {
	size int // slots in all (under mu); a request for more never fits

	// reclaim, if set, frees slots held by something idle (warm fixture
	// databases) and reports whether it freed any. A request that has to
	// wait calls it until the request is met or nothing idle is left.
	reclaim func() bool

	mu      sync.Mutex
	used    int
	waiters list.List // of *roomWaiter, oldest first
}

type roomWaiter struct {
	n     int
	ready chan struct{} // closed once the slots are granted
}

func newConnRoom(size int, reclaim func() bool) *connRoom {
	return &connRoom{size: max(size, 0), reclaim: reclaim}
}

// capacity is the slots in all.
func (b *connRoom) capacity() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.size
}

// grow raises the slots in all to size (never lowers them) and grants the
// waiters that now fit.
func (b *connRoom) grow(size int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if size > b.size {
		b.size = size
		b.grantLocked()
	}
}

// tryAcquire takes n slots if they are free now and nobody waits before.
func (b *connRoom) tryAcquire(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.waiters.Len() == 0 && b.size-b.used >= n {
		b.used += n
		return true
	}
	return false
}

// acquire takes n slots, waiting in line until they are free or ctx is
// done. The caller checks n <= size first: a larger request would wait
// forever.
func (b *connRoom) acquire(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	b.mu.Lock()
	if b.waiters.Len() == 0 && b.size-b.used >= n {
		b.used += n
		b.mu.Unlock()
		return nil
	}
	w := &roomWaiter{n: n, ready: make(chan struct{})}
	elem := b.waiters.PushBack(w)
	b.mu.Unlock()

	// Idle holders give way before anyone waits for busy ones.
	for b.reclaim != nil && ctx.Err() == nil && !granted(w) {
		if !b.reclaim() {
			break
		}
	}
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	select {
	case <-w.ready:
		// Granted just as ctx ended: give the slots back to the line.
		b.used -= n
	default:
		b.waiters.Remove(elem)
	}
	b.grantLocked() // the line may move now that this request left it
	b.mu.Unlock()
	return ctx.Err()
}

func granted(w *roomWaiter) bool {
	select {
	case <-w.ready:
		return true
	default:
		return false
	}
}

// release gives n slots back and grants the waiters they let through.
func (b *connRoom) release(n int) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if b.used < 0 {
		panic("pgfixture: internal error: more connection slots released than reserved")
	}
	b.grantLocked()
}

// grantLocked grants waiters in order while the first one fits; b.mu is
// held.
func (b *connRoom) grantLocked() {
	for e := b.waiters.Front(); e != nil; e = b.waiters.Front() {
		w := e.Value.(*roomWaiter)
		if b.size-b.used < w.n {
			return
		}
		b.used += w.n
		b.waiters.Remove(e)
		close(w.ready)
	}
}

// waiting reports whether a request is waiting for slots.
func (b *connRoom) waiting() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiters.Len() > 0
}

// inUse returns the slots taken now.
func (b *connRoom) inUse() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// slots is a reservation of n slots of a connRoom, given back once.
type slots struct {
	b    *connRoom
	n    int
	once sync.Once
}

func (s *slots) release() {
	if s == nil {
		return
	}
	s.once.Do(func() { s.b.release(s.n) })
}
