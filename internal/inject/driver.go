package inject

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync"
)

// The database/sql side of points and crashes, for any driver (lib/pq, or
// anything registered with database/sql): [WrapConnector] wraps a
// driver.Connector so that every Exec, Query, Prepare, prepared-statement
// execution, Begin, Commit and Rollback is a point of the attempt found in the
// call's context, and a crash closes every driver connection the wrapper
// opened ([DriverConns.CutAll]).
//
// How it keeps database/sql from re-running a crashed statement:
// database/sql retries a call on another connection when the driver returns
// driver.ErrBadConn (DB.retry: up to maxBadConnRetries times on a cached or
// new connection, then once on a new one). So:
//   - a call that is refused (the attempt crashed or finished, or the context
//     belongs to no attempt) returns an error that is never ErrBadConn, so it
//     is not retried, and nothing reaches the inner driver;
//   - ErrBadConn is returned only by a connection that a crash cut, from
//     ResetSession (and IsValid reports false), and from a statement outside
//     a transaction whose attempt did not crash (the next attempt, or a
//     foreign context, picked up a cut connection: nothing was sent, and
//     database/sql must discard it and use another one);
//   - when the inner driver itself says ErrBadConn after a point was entered
//     (by the ErrBadConn contract nothing was executed), the retry that
//     database/sql makes at once is not counted as a new point.

// errConnCut is returned for calls on a connection that a crash cut, where
// returning driver.ErrBadConn would not be right (inside a transaction, on
// rows, at Commit or Rollback).
var errConnCut = errors.New("twice: the connection was cut by the crash of an attempt; its transaction was aborted by the server")

// maxBadConnCalls is how often database/sql calls a driver for one statement
// that keeps failing with driver.ErrBadConn: maxBadConnRetries (2) tries on a
// cached or new connection, then one on a new connection (database/sql's
// DB.retry).
const maxBadConnCalls = 3

// DriverConns is the registry of the driver connections one wrapped connector
// opened. Like [Conns] for pgx, a crash cuts them all: they are closed, so
// PostgreSQL ends their sessions, aborts their open transactions and drops
// their locks. A connection busy in a driver call is closed as soon as that
// call returns (a driver connection must not be used by two goroutines at
// once); the attempt's context is cancelled by the crash, which makes
// context-aware drivers return promptly.
type DriverConns struct {
	mu    sync.Mutex
	open  map[*drvConn]struct{}
	opens int
	retry map[*Run]retryToken
}

// retryToken remembers, for one attempt, a statement whose point was entered
// and which the inner driver refused with driver.ErrBadConn (so it did not
// run): the retry that database/sql makes at once goes through without a
// second point.
type retryToken struct {
	label string
	calls int // driver calls made for the statement so far
}

// NewDriverConns returns an empty registry.
func NewDriverConns() *DriverConns {
	return &DriverConns{open: make(map[*drvConn]struct{}), retry: make(map[*Run]retryToken)}
}

// CutAll closes every open driver connection of the registry (at once, or
// when its current call returns). Later calls on them are refused without
// reaching the driver.
func (d *DriverConns) CutAll() {
	d.mu.Lock()
	all := make([]*drvConn, 0, len(d.open))
	for c := range d.open {
		all = append(all, c)
	}
	clear(d.retry)
	d.mu.Unlock()
	for _, c := range all {
		c.cutOff()
	}
}

// Opens counts the driver connections opened so far (for tests and
// benchmarks).
func (d *DriverConns) Opens() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.opens
}

// Open counts the driver connections not yet closed.
func (d *DriverConns) Open() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.open)
}

func (d *DriverConns) add(c *drvConn) {
	d.mu.Lock()
	d.open[c] = struct{}{}
	d.opens++
	d.mu.Unlock()
}

func (d *DriverConns) forget(c *drvConn) {
	d.mu.Lock()
	delete(d.open, c)
	d.mu.Unlock()
}

// takeRetry reports whether a call of r labelled label is database/sql's
// retry of a statement the driver refused with ErrBadConn, and how many calls
// were made for it before. PREPARE calls (a prepared statement re-prepared on
// another connection before its retry) leave the token in place; any other
// call drops it.
func (d *DriverConns) takeRetry(r *Run, label string, k callKind) (int, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.retry[r]
	if !ok || k == kindPrepare {
		return 0, false
	}
	delete(d.retry, r)
	if t.label != label {
		return 0, false
	}
	if crashed, _, _ := r.Crashed(); crashed {
		return 0, false
	}
	return t.calls, true
}

func (d *DriverConns) setRetry(r *Run, label string, calls int) {
	d.mu.Lock()
	d.retry[r] = retryToken{label: label, calls: calls}
	d.mu.Unlock()
}

func (d *DriverConns) dropRetry(r *Run) {
	d.mu.Lock()
	delete(d.retry, r)
	d.mu.Unlock()
}

// OpenConnector returns a connector for the database/sql driver registered
// under driverName (as [sql.Open] would use it) and dsn: the driver's own
// connector when it implements driver.DriverContext, otherwise one that calls
// its Open(dsn).
func OpenConnector(driverName, dsn string) (driver.Connector, error) {
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		return nil, err
	}
	drv := db.Driver()
	_ = db.Close()
	if dc, ok := drv.(driver.DriverContext); ok {
		return dc.OpenConnector(dsn)
	}
	return dsnConnector{dsn: dsn, drv: drv}, nil
}

type dsnConnector struct {
	dsn string
	drv driver.Driver
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.drv }

// WrapConnector wraps c so that the statements sent through it are points of
// the attempt in their context and a crash can cut its connections (register
// dc.CutAll with [Run.OnCrash] or [Worker.OnCut]). Calls whose context
// belongs to no attempt are refused with [ErrForeignContext] and reported to
// foreign (which may be nil). A nil dc gets a registry of its own, which then
// nothing can cut.
func WrapConnector(c driver.Connector, dc *DriverConns, foreign Foreign) driver.Connector {
	return WrapConnectorOwned(c, dc, NewOwner(foreign))
}

// WrapConnectorOwned is [WrapConnector] for a worker's handles: a call whose
// context carries no attempt belongs to the attempt running on owner.
func WrapConnectorOwned(c driver.Connector, dc *DriverConns, owner *Owner) driver.Connector {
	if dc == nil {
		dc = NewDriverConns()
	}
	return &connector{inner: c, reg: dc, owner: owner}
}

type connector struct {
	inner driver.Connector
	reg   *DriverConns
	owner *Owner
}

// Connect opens a connection, unless the attempt in ctx has crashed.
func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := crashedErr(c.owner.runOf(ctx)); err != nil {
		return nil, err
	}
	ci, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	w := &drvConn{inner: ci, reg: c.reg, owner: c.owner}
	c.reg.add(w)
	return w, nil
}

func (c *connector) Driver() driver.Driver { return c.inner.Driver() }

// Close closes the inner connector if it has a Close (sql.DB.Close calls it).
func (c *connector) Close() error {
	if cl, ok := c.inner.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// crashedErr returns the error that refuses a call of r when r crashed.
func crashedErr(r *Run) error {
	if r == nil {
		return nil
	}
	if crashed, _, _ := r.Crashed(); crashed {
		return fmt.Errorf("%s: %w", r.Name(), ErrCrashed)
	}
	return nil
}

type callKind int

const (
	kindStmt    callKind = iota // Exec, Query, a prepared statement's execution, Begin
	kindPrepare                 // Prepare
	kindTx                      // Commit, Rollback
)

// drvConn wraps one driver connection. It implements every optional
// interface database/sql looks for on a connection, and falls back to what
// database/sql itself does when the inner connection lacks one, so that
// database/sql behaves as it would on the inner connection (see the notes on
// each method).
type drvConn struct {
	inner driver.Conn
	reg   *DriverConns
	owner *Owner

	mu     sync.Mutex
	busy   int  // driver calls in progress
	cut    bool // a crash cut the connection
	closed bool // the inner connection is closed

	// Touched only inside calls, which database/sql serializes per connection.
	inTx    bool
	covered string // a statement whose point was entered, that database/sql re-sends through Prepare (driver.ErrSkip)
	hasCov  bool
}

// acquire marks a call in progress; false when the connection was cut.
func (c *drvConn) acquire() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut || c.closed {
		return false
	}
	c.busy++
	return true
}

// release ends a call; a connection cut during the call is closed now.
func (c *drvConn) release() {
	c.mu.Lock()
	c.busy--
	closeNow := c.cut && c.busy == 0 && !c.closed
	if closeNow {
		c.closed = true
	}
	c.mu.Unlock()
	if closeNow {
		c.reg.forget(c)
		_ = c.inner.Close()
	}
}

// cutOff cuts the connection: closed now if idle, else when its call returns.
func (c *drvConn) cutOff() {
	c.mu.Lock()
	c.cut = true
	closeNow := c.busy == 0 && !c.closed
	if closeNow {
		c.closed = true
	}
	c.mu.Unlock()
	if closeNow {
		c.reg.forget(c)
		_ = c.inner.Close()
	}
}

func (c *drvConn) isCut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cut || c.closed
}

// call is one admitted driver call.
type call struct {
	c     *drvConn
	run   *Run
	label string
	kind  callKind
	calls int // driver calls made for this statement, this one included
}

// gate decides whether a call may reach the inner driver: it is a point of
// the attempt in ctx (or database/sql's immediate retry of one). On success
// the connection is marked busy until call.done.
func (c *drvConn) gate(ctx context.Context, label string, k callKind) (*call, error) {
	r := c.owner.runOf(ctx)
	c.hasCov = false
	if !c.acquire() {
		if err := crashedErr(r); err != nil {
			return nil, err
		}
		if c.inTx || k == kindTx {
			return nil, errConnCut
		}
		// A cut connection handed to a live attempt: nothing was sent, and
		// database/sql must discard it and retry on another one.
		return nil, driver.ErrBadConn
	}
	if r == nil {
		if letThrough(label, nil) {
			return &call{c: c, label: label, kind: k, calls: 1}, nil
		}
		c.release()
		c.owner.refuseForeign(label)
		return nil, fmt.Errorf("%w (%s)", ErrForeignContext, label)
	}
	p := &call{c: c, run: r, label: label, kind: k, calls: 1}
	if n, ok := c.reg.takeRetry(r, label, k); ok {
		p.calls = n + 1
		return p, nil
	}
	if _, err := r.Enter(ctx, SQL, label); err != nil {
		if letThrough(label, err) {
			return p, nil
		}
		if errors.Is(err, ErrCrashed) || k == kindTx {
			// Fail-stop: whatever this connection holds (an open
			// transaction) is aborted by the server when it is closed.
			c.cutOff()
		}
		c.release()
		return nil, err
	}
	return p, nil
}

// done ends the call and decides what database/sql sees of err.
func (p *call) done(err error) error {
	c := p.c
	cutDuring := c.isCutLocked()
	c.release()
	if err == nil || !errors.Is(err, driver.ErrBadConn) {
		return err
	}
	if cerr := crashedErr(p.run); cerr != nil || cutDuring {
		// Never let database/sql retry the statement of a crashed attempt.
		if cerr == nil {
			cerr = errConnCut
		}
		return cerr
	}
	if p.kind == kindStmt && !c.inTx && p.calls < maxBadConnCalls {
		c.reg.setRetry(p.run, p.label, p.calls)
	}
	return err
}

func (c *drvConn) isCutLocked() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cut
}

// Close is database/sql closing the connection.
func (c *drvConn) Close() error {
	c.reg.forget(c)
	c.mu.Lock()
	already := c.closed
	c.closed = true
	c.mu.Unlock()
	if already {
		return nil
	}
	return c.inner.Close()
}

// ExecContext: database/sql calls it for DB.Exec and Tx.Exec. When the inner
// connection has no Execer it returns driver.ErrSkip after the point, and the
// Prepare and execution database/sql then makes for the same statement are
// covered by that point.
func (c *drvConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	var withCtx func() (driver.Result, error)
	var old func([]driver.Value) (driver.Result, error)
	switch ci := c.inner.(type) {
	case driver.ExecerContext:
		withCtx = func() (driver.Result, error) { return ci.ExecContext(ctx, query, args) }
	case driver.Execer: //nolint:staticcheck // a driver that has only the old interface
		old = func(v []driver.Value) (driver.Result, error) { return ci.Exec(query, v) }
	}
	return runStatement(ctx, c, query, args, withCtx, old)
}

// QueryContext: as ExecContext, for queries; the rows keep the connection
// marked busy while they fetch.
func (c *drvConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	var withCtx func() (driver.Rows, error)
	var old func([]driver.Value) (driver.Rows, error)
	switch ci := c.inner.(type) {
	case driver.QueryerContext:
		withCtx = func() (driver.Rows, error) { return ci.QueryContext(ctx, query, args) }
	case driver.Queryer: //nolint:staticcheck // a driver that has only the old interface
		old = func(v []driver.Value) (driver.Rows, error) { return ci.Query(query, v) }
	}
	rows, err := runStatement(ctx, c, query, args, withCtx, old)
	if err != nil {
		return nil, err
	}
	return wrapRows(c, rows), nil
}

// runStatement is ExecContext's and QueryContext's one path: the point,
// then the statement on the inner connection (callInner); driver.ErrSkip
// marks the statement as covered by this point for the Prepare
// database/sql makes next.
func runStatement[T any](ctx context.Context, c *drvConn, query string, args []driver.NamedValue,
	withCtx func() (T, error), old func([]driver.Value) (T, error)) (T, error) {
	var zero T
	p, err := c.gate(ctx, Label(query), kindStmt)
	if err != nil {
		return zero, err
	}
	res, err := callInner(ctx, args, withCtx, old)
	if errors.Is(err, driver.ErrSkip) {
		c.covered, c.hasCov = query, true
		p.c.release()
		return zero, driver.ErrSkip
	}
	if err = p.done(err); err != nil {
		return zero, err
	}
	return res, nil
}

// callInner runs a statement on the inner driver: through its
// context-aware method (withCtx) when it has one, else its old one with the
// arguments as plain values (old), else it returns driver.ErrSkip.
func callInner[T any](ctx context.Context, args []driver.NamedValue,
	withCtx func() (T, error), old func([]driver.Value) (T, error)) (T, error) {
	var zero T
	switch {
	case withCtx != nil:
		return withCtx()
	case old != nil:
		dargs, err := namedToValues(args)
		if err != nil {
			return zero, err
		}
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		return old(dargs)
	}
	return zero, driver.ErrSkip
}

// PrepareContext is a point ("PREPARE " + the SQL), unless database/sql is
// preparing a statement that ExecContext or QueryContext already admitted
// (the driver.ErrSkip fallback).
func (c *drvConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	covered := c.hasCov && c.covered == query
	var p *call
	var err error
	if covered {
		c.hasCov = false
		if !c.acquire() {
			if err := crashedErr(c.owner.runOf(ctx)); err != nil {
				return nil, err
			}
			return nil, errConnCut
		}
		p = &call{c: c, run: c.owner.runOf(ctx), kind: kindPrepare, calls: maxBadConnCalls}
	} else if p, err = c.gate(ctx, Label("PREPARE "+query), kindPrepare); err != nil {
		return nil, err
	}
	var si driver.Stmt
	if cp, ok := c.inner.(driver.ConnPrepareContext); ok {
		si, err = cp.PrepareContext(ctx, query)
	} else {
		si, err = c.inner.Prepare(query)
		if err == nil && ctx.Err() != nil {
			_ = si.Close()
			si, err = nil, ctx.Err()
		}
	}
	if err = p.done(err); err != nil {
		return nil, err
	}
	s := &drvStmt{c: c, inner: si, label: Label(query), coveredOnce: covered}
	if cc, ok := si.(driver.ColumnConverter); ok { //nolint:staticcheck // kept for drivers that have it
		return &drvStmtCC{drvStmt: s, cc: cc}, nil
	}
	return s, nil
}

// Prepare is the old interface; database/sql uses PrepareContext.
func (c *drvConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// BeginTx is the point "BEGIN". The options are checked as database/sql
// checks them for a driver without ConnBeginTx, before anything is sent.
func (c *drvConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	cb, hasBeginTx := c.inner.(driver.ConnBeginTx)
	if !hasBeginTx {
		if opts.Isolation != driver.IsolationLevel(sql.LevelDefault) {
			return nil, errors.New("sql: driver does not support non-default isolation level")
		}
		if opts.ReadOnly {
			return nil, errors.New("sql: driver does not support read-only transactions")
		}
	}
	p, err := c.gate(ctx, "BEGIN", kindStmt)
	if err != nil {
		return nil, err
	}
	var txi driver.Tx
	if hasBeginTx {
		txi, err = cb.BeginTx(ctx, opts)
	} else {
		txi, err = c.inner.Begin() //nolint:staticcheck // the driver has nothing else
		if err == nil && ctx.Err() != nil {
			_ = txi.Rollback()
			txi, err = nil, ctx.Err()
		}
	}
	if err = p.done(err); err != nil {
		return nil, err
	}
	c.inTx = true
	return &drvTx{c: c, inner: txi, ctx: ctx}, nil
}

// Begin is the old interface; database/sql uses BeginTx.
func (c *drvConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// Ping is not a point; it is refused for a crashed attempt and fails with
// driver.ErrBadConn on a cut connection (DB.PingContext does not retry it).
func (c *drvConn) Ping(ctx context.Context) error {
	if err := crashedErr(c.owner.runOf(ctx)); err != nil {
		return err
	}
	if !c.acquire() {
		return driver.ErrBadConn
	}
	defer c.release()
	if pi, ok := c.inner.(driver.Pinger); ok {
		return pi.Ping(ctx)
	}
	return nil
}

// ResetSession runs before database/sql reuses a pooled connection: a cut
// connection says driver.ErrBadConn, so database/sql discards it before the
// next attempt uses it.
func (c *drvConn) ResetSession(ctx context.Context) error {
	if !c.acquire() {
		return driver.ErrBadConn
	}
	defer c.release()
	c.hasCov = false
	if sr, ok := c.inner.(driver.SessionResetter); ok {
		return sr.ResetSession(ctx)
	}
	return nil
}

// IsValid is false for a cut connection, so database/sql does not put it
// back into its pool.
func (c *drvConn) IsValid() bool {
	if c.isCut() {
		return false
	}
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// CheckNamedValue delegates to the inner connection; without one, ErrSkip
// makes database/sql use its default conversion, as it would.
func (c *drvConn) CheckNamedValue(nv *driver.NamedValue) error {
	if nc, ok := c.inner.(driver.NamedValueChecker); ok {
		return nc.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// keepsConnOnRollback reports whether database/sql would keep the inner
// connection after rolling back a transaction whose context was cancelled
// (it does when the connection is a SessionResetter and a Validator).
func (c *drvConn) keepsConnOnRollback() bool {
	_, sr := c.inner.(driver.SessionResetter)
	_, v := c.inner.(driver.Validator)
	return sr && v
}

func namedToValues(named []driver.NamedValue) ([]driver.Value, error) {
	dargs := make([]driver.Value, len(named))
	for n, param := range named {
		if len(param.Name) > 0 {
			return nil, errors.New("sql: driver does not support the use of Named Parameters")
		}
		dargs[n] = param.Value
	}
	return dargs, nil
}

// drvTx remembers the context of BeginTx: database/sql's Commit and Rollback
// have none, and they are points of the attempt that began the transaction.
type drvTx struct {
	c     *drvConn
	inner driver.Tx
	ctx   context.Context
}

// Commit is the point "COMMIT". A refused Commit cuts the connection, so the
// server aborts the transaction.
func (t *drvTx) Commit() error {
	return t.end("COMMIT", t.inner.Commit)
}

// Rollback is the point "ROLLBACK". database/sql rolls back by itself when
// the transaction's context is cancelled (a crash, or the job returning with
// the transaction open): that Rollback is refused and the connection cut.
func (t *drvTx) Rollback() error {
	err := t.end("ROLLBACK", t.inner.Rollback)
	if t.ctx.Err() != nil && !t.c.keepsConnOnRollback() {
		// database/sql would have discarded the inner connection here; the
		// wrapper has both interfaces that make it keep one, so discard it.
		t.c.cutOff()
	}
	return err
}

func (t *drvTx) end(label string, f func() error) error {
	p, err := t.c.gate(t.ctx, label, kindTx)
	t.c.inTx = false
	if err != nil {
		return err
	}
	return p.done(f())
}

// drvStmt is a prepared statement: each execution is a point (the SQL).
type drvStmt struct {
	c           *drvConn
	inner       driver.Stmt
	label       string
	coveredOnce bool // the first execution is covered by an Exec/Query point (driver.ErrSkip)
}

func (s *drvStmt) Close() error {
	if !s.c.acquire() {
		return nil // the connection is closed, and its statements with it
	}
	defer s.c.release()
	return s.inner.Close()
}

func (s *drvStmt) NumInput() int { return s.inner.NumInput() }

func (s *drvStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), valuesToNamed(args))
}

func (s *drvStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), valuesToNamed(args))
}

func (s *drvStmt) admit(ctx context.Context) (*call, error) {
	if s.coveredOnce {
		s.coveredOnce = false
		if !s.c.acquire() {
			if err := crashedErr(s.c.owner.runOf(ctx)); err != nil {
				return nil, err
			}
			return nil, errConnCut
		}
		// The ErrSkip fallback: database/sql does not retry this one
		// through the wrapper's ExecContext, so no retry token.
		return &call{c: s.c, run: s.c.owner.runOf(ctx), kind: kindPrepare, calls: maxBadConnCalls}, nil
	}
	return s.c.gate(ctx, s.label, kindStmt)
}

func (s *drvStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	p, err := s.admit(ctx)
	if err != nil {
		return nil, err
	}
	var withCtx func() (driver.Result, error)
	if se, ok := s.inner.(driver.StmtExecContext); ok {
		withCtx = func() (driver.Result, error) { return se.ExecContext(ctx, args) }
	}
	res, err := callInner(ctx, args, withCtx, s.inner.Exec) //nolint:staticcheck // the driver may have nothing else
	return res, p.done(err)
}

func (s *drvStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	p, err := s.admit(ctx)
	if err != nil {
		return nil, err
	}
	var withCtx func() (driver.Rows, error)
	if sq, ok := s.inner.(driver.StmtQueryContext); ok {
		withCtx = func() (driver.Rows, error) { return sq.QueryContext(ctx, args) }
	}
	rows, err := callInner(ctx, args, withCtx, s.inner.Query) //nolint:staticcheck // the driver may have nothing else
	if err = p.done(err); err != nil {
		return nil, err
	}
	return wrapRows(s.c, rows), nil
}

// CheckNamedValue: database/sql asks the statement first and the connection
// only when the statement has no checker; the wrapper statement always has
// one, so it asks the inner statement, then the inner connection.
func (s *drvStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if nc, ok := s.inner.(driver.NamedValueChecker); ok {
		return nc.CheckNamedValue(nv)
	}
	return s.c.CheckNamedValue(nv)
}

// drvStmtCC is a statement whose inner statement is a ColumnConverter (only
// then, since database/sql converts differently when a statement is one).
type drvStmtCC struct {
	*drvStmt
	cc driver.ColumnConverter //nolint:staticcheck // kept for drivers that have it
}

func (s *drvStmtCC) ColumnConverter(idx int) driver.ValueConverter { return s.cc.ColumnConverter(idx) }

func valuesToNamed(args []driver.Value) []driver.NamedValue {
	named := make([]driver.NamedValue, len(args))
	for i, v := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return named
}

// UseDriver replaces the worker's *sql.DB with one on the database/sql driver
// registered under driverName (for example "postgres" from github.com/lib/pq)
// connecting with dsn, wrapped by [WrapConnector]: its statements are points
// of the attempt in their context, a crash of the worker's attempt ([Worker.Cut])
// cuts its connections, and calls with a foreign context are recorded as the
// pgx handles' are.
func (w *Worker) UseDriver(driverName, dsn string) error {
	inner, err := OpenConnector(driverName, dsn)
	if err != nil {
		return err
	}
	w.UseConnector(inner)
	return nil
}

// UseConnector replaces the worker's *sql.DB with one on inner (the
// application's own connector, with its options), wrapped as
// [Worker.UseDriver] wraps a driver's.
func (w *Worker) UseConnector(inner driver.Connector) {
	dc := NewDriverConns()
	db := sql.OpenDB(WrapConnectorOwned(inner, dc, w.Owner))
	db.SetMaxOpenConns(maxWorkerConns)
	db.SetMaxIdleConns(maxWorkerConns)
	old := w.DB // set up before any attempt runs, so nothing uses it now
	w.DB = db
	w.OnCut(dc.CutAll)
	if old != nil {
		_ = old.Close()
	}
}
