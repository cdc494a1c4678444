package inject

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Foreign is called when a statement carries a context that belongs to no
// attempt; label names the statement.
type Foreign func(label string)

// Instrument prepares cfg for a worker: connections are dialed through conns
// (so a crash can cut them), every statement becomes a point of the attempt in
// its context, and statements are sent without a statement cache, so the
// points of a job are the same on a cold and a warm connection.
func Instrument(cfg *pgx.ConnConfig, conns *Conns, foreign Foreign) {
	dial := cfg.DialFunc
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	cfg.DialFunc = conns.Dial(dial)
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	cfg.StatementCacheCapacity = 0
	cfg.DescriptionCacheCapacity = 0
	cfg.Tracer = &tracer{foreign: foreign}
}

// InstrumentPool is [Instrument] for a pool's config; it also makes the pool
// drop connections that a crash cut instead of handing them to the next
// attempt.
func InstrumentPool(cfg *pgxpool.Config, conns *Conns, foreign Foreign) {
	Instrument(cfg.ConnConfig, conns, foreign)
	cfg.PrepareConn = func(_ context.Context, c *pgx.Conn) (bool, error) {
		return !c.IsClosed() && !IsCut(c.PgConn().Conn()), nil
	}
	cfg.AfterRelease = func(c *pgx.Conn) bool { return !IsCut(c.PgConn().Conn()) }
}

// tracer turns statements into points. Refusing a statement means: cut its
// connection and hand pgx an already-cancelled context, which fails the
// statement before anything is sent (panicking inside the tracer would leak
// the pooled connection).
type tracer struct{ foreign Foreign }

var cancelled = sync.OnceValue(func() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrCrashed)
	return ctx
})

func (t *tracer) point(ctx context.Context, c *pgx.Conn, label string) context.Context {
	return t.statement(ctx, c, label, "")
}

// statement is point for a statement with its SQL text, which may be played
// as an implicit transaction or lose its reply (implicit.go).
func (t *tracer) statement(ctx context.Context, c *pgx.Conn, label, sql string) context.Context {
	if c != nil && IsCut(c.PgConn().Conn()) {
		// A connection the crash already cut: fail quietly, whatever the context.
		return refused(ctx, ErrCrashed)
	}
	r := FromContext(ctx)
	if r == nil {
		if t.foreign != nil {
			t.foreign(label)
		}
		return refused(ctx, ErrForeignContext)
	}
	s := Step{Kind: SQL, Label: label}
	if c != nil {
		s.Backend = c.PgConn().PID()
		s.Implicit = implicitStatement(c, sql)
	}
	s, err := r.EnterStep(ctx, s)
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

func (t *tracer) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return t.statement(ctx, c, noted(ctx, Label(d.SQL)), d.SQL)
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
	}
	return t.statement(ctx, c, noted(ctx, Label(label)), sql)
}
func (t *tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (t *tracer) TraceBatchEnd(ctx context.Context, c *pgx.Conn, _ pgx.TraceBatchEndData) {
	disarm(ctx, c)
}

func (t *tracer) TraceCopyFromStart(ctx context.Context, c *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	return t.statement(ctx, c, Label("COPY "+d.TableName.Sanitize()+" FROM STDIN"), "COPY")
}
func (t *tracer) TraceCopyFromEnd(ctx context.Context, c *pgx.Conn, _ pgx.TraceCopyFromEndData) {
	disarm(ctx, c)
}

func (t *tracer) TracePrepareStart(ctx context.Context, c *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	return t.point(ctx, c, Label("PREPARE "+d.SQL))
}
func (t *tracer) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}
