package inject

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Foreign is called when a statement belongs to no attempt (its context
// carries none, and no attempt runs on the handles); label names the
// statement.
type Foreign func(label string)

// Instrument prepares cfg for a worker: connections are dialed through conns
// (so a crash can cut them) and every statement the job sends becomes a point
// of the attempt in its context. The exec mode and the caches stay as cfg has
// them (pgx's default caches statements, as a production pool does): the
// Parse and Describe pgx sends under a statement on a cold connection are not
// points, so the points of a job are the same on a cold and a warm
// connection. A tracer already on cfg (the application's) still sees every
// statement, after the check's.
func Instrument(cfg *pgx.ConnConfig, conns *Conns, owner *Owner) {
	dial := cfg.DialFunc
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	cfg.DialFunc = conns.Dial(dial)
	cfg.Tracer = chainTracers(&tracer{owner: owner}, cfg.Tracer)
}

// InstrumentPool is [Instrument] for a pool's config; it also makes the pool
// drop connections that a crash cut instead of handing them to the next
// attempt.
func InstrumentPool(cfg *pgxpool.Config, conns *Conns, owner *Owner) {
	Instrument(cfg.ConnConfig, conns, owner)
	appPrepare, appBefore, appRelease := cfg.PrepareConn, cfg.BeforeAcquire, cfg.AfterRelease //nolint:staticcheck // BeforeAcquire: an application may still set it
	cfg.BeforeAcquire = nil                                                                   //nolint:staticcheck
	cfg.PrepareConn = func(ctx context.Context, c *pgx.Conn) (bool, error) {
		if c.IsClosed() || IsCut(c.PgConn().Conn()) {
			return false, nil
		}
		if appBefore != nil && !appBefore(ctx, c) {
			return false, nil
		}
		if appPrepare != nil {
			return appPrepare(ctx, c)
		}
		return true, nil
	}
	cfg.AfterRelease = func(c *pgx.Conn) bool {
		if IsCut(c.PgConn().Conn()) {
			return false
		}
		return appRelease == nil || appRelease(c)
	}
}

// tracer turns statements into points. Refusing a statement means: cut its
// connection and hand pgx an already-cancelled context, which fails the
// statement before anything is sent (panicking inside the tracer would leak
// the pooled connection).
type tracer struct{ owner *Owner }

var cancelled = sync.OnceValue(func() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrCrashed)
	return ctx
})

// connSetupKey marks the context of what an application's AfterConnect
// sends on a new connection.
type connSetupKey struct{}

// ConnSetup returns ctx whose statements set up a new connection (an
// application's AfterConnect loading its types): they are sent, and are no
// point of any attempt.
func ConnSetup(ctx context.Context) context.Context {
	return context.WithValue(ctx, connSetupKey{}, true)
}

func (t *tracer) point(ctx context.Context, c *pgx.Conn, label string) context.Context {
	return t.statement(ctx, c, label, "")
}

// statement is point for a statement with its SQL text, which may be played
// as an implicit transaction or lose its reply (implicit.go).
func (t *tracer) statement(ctx context.Context, c *pgx.Conn, label, sql string) context.Context {
	if ctx.Value(connSetupKey{}) != nil {
		if c != nil && IsCut(c.PgConn().Conn()) {
			return refused(ctx, ErrCrashed)
		}
		return ctx
	}
	if c != nil && IsCut(c.PgConn().Conn()) {
		// A connection the crash already cut: fail quietly, whatever the context.
		return refused(ctx, ErrCrashed)
	}
	noteStatement(c, sql) // fresh.go
	r := t.owner.runOf(ctx)
	if r == nil {
		if letThrough(label, nil) {
			return ctx
		}
		t.owner.refuseForeign(label)
		return refused(ctx, ErrForeignContext)
	}
	s := Step{Kind: SQL, Label: label}
	if c != nil {
		s.Backend = c.PgConn().PID()
		s.Implicit = implicitStatement(c, sql)
	}
	s, err := r.EnterStep(ctx, s)
	if err != nil && letThrough(label, err) {
		return ctx
	}
	if err == nil {
		err = arm(ctx, r, c, s)
	}
	if err != nil {
		if c != nil {
			_ = c.PgConn().Conn().Close()
		}
		return refused(ctx, err)
	}
	return ctx
}

// refused returns a context that is already done, so pgx refuses the call,
// and that still carries the values of ctx.
func refused(ctx context.Context, cause error) context.Context {
	return refusedCtx{Context: ctx, cause: cause}
}

type refusedCtx struct {
	context.Context
	cause error
}

func (refusedCtx) Done() <-chan struct{} { return cancelled().Done() }
func (r refusedCtx) Err() error          { return refusal{r.cause} }

// refusal is the error a refused statement carries: the reason, and
// context.Canceled so that pgx and callers treat it as a cancellation.
type refusal struct{ cause error }

func (e refusal) Error() string   { return e.cause.Error() }
func (e refusal) Unwrap() []error { return []error{e.cause, context.Canceled} }

// inStatementKey marks the context of a statement the job sent: the
// prepare pgx makes under it (to fill its caches) is part of it, not a point.
type inStatementKey struct{}

func inStatement(ctx context.Context) context.Context {
	return context.WithValue(ctx, inStatementKey{}, true)
}

func (t *tracer) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return inStatement(t.statement(ctx, c, noted(ctx, Label(d.SQL)), d.SQL))
}
func (t *tracer) TraceQueryEnd(ctx context.Context, c *pgx.Conn, _ pgx.TraceQueryEndData) {
	disarm(ctx, c)
}

func (t *tracer) TraceBatchStart(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	label, sql := "batch", ""
	if d.Batch != nil {
		n := len(d.Batch.QueuedQueries)
		if n > 0 {
			label = fmt.Sprintf("batch of %d: %s", n, Label(d.Batch.QueuedQueries[0].SQL))
			sql = d.Batch.QueuedQueries[0].SQL
		}
		if ctx.Value(connSetupKey{}) == nil {
			for _, q := range d.Batch.QueuedQueries[min(n, 1):] {
				noteStatement(c, q.SQL) // the first is statement's
			}
		}
	}
	return inStatement(t.statement(ctx, c, noted(ctx, Label(label)), sql))
}
func (t *tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (t *tracer) TraceBatchEnd(ctx context.Context, c *pgx.Conn, _ pgx.TraceBatchEndData) {
	disarm(ctx, c)
}

func (t *tracer) TraceCopyFromStart(ctx context.Context, c *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	return inStatement(t.statement(ctx, c, Label("COPY "+d.TableName.Sanitize()+" FROM STDIN"), "COPY"))
}
func (t *tracer) TraceCopyFromEnd(ctx context.Context, c *pgx.Conn, _ pgx.TraceCopyFromEndData) {
	disarm(ctx, c)
}

// TraceAcquireStart refuses, and records as late, an acquire whose context
// ended with its attempt (the job returned): pgxpool fails it on that
// context before any statement tracer sees it.
func (t *tracer) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	if r := FromContext(ctx); r != nil && r.RefuseEnded(ctx, "acquire a connection (pgxpool)") {
		return refused(ctx, ErrFinished)
	}
	return ctx
}
func (t *tracer) TraceAcquireEnd(context.Context, *pgxpool.Pool, pgxpool.TraceAcquireEndData) {}

// TracePrepareStart makes an explicit prepare (conn.Prepare, database/sql's
// Prepare) a point; the prepare pgx sends under a statement, on a cold
// connection only, is not one.
func (t *tracer) TracePrepareStart(ctx context.Context, c *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	if ctx.Value(inStatementKey{}) != nil {
		return ctx
	}
	return t.point(ctx, c, Label("PREPARE "+d.SQL))
}
func (t *tracer) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}
