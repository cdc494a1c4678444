package inject

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// tracerChain is the check's tracer followed by the application's: the
// check's decides first (a refused statement reaches the application's tracer
// already refused), then the application's sees the statement as it would in
// production. Each of pgx's tracer interfaces is passed on to the
// application's tracer when it has that one.
type tracerChain struct {
	check *tracer
	app   any // the application's tracer; nil for none
}

// chainTracers puts the check's tracer before app's. An app that is already
// the check's (a config instrumented twice, as a pool built from
// a.Pool.Config()) is replaced, not chained again.
func chainTracers(check *tracer, app pgx.QueryTracer) pgx.QueryTracer {
	switch t := app.(type) {
	case nil:
		return check
	case *tracer:
		return check
	case *tracerChain:
		if t.app == nil {
			return check
		}
		return &tracerChain{check: check, app: t.app}
	}
	return &tracerChain{check: check, app: app}
}

func (t *tracerChain) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	ctx = t.check.TraceQueryStart(ctx, c, d)
	if a, ok := t.app.(pgx.QueryTracer); ok {
		ctx = a.TraceQueryStart(ctx, c, d)
	}
	return ctx
}

func (t *tracerChain) TraceQueryEnd(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryEndData) {
	if a, ok := t.app.(pgx.QueryTracer); ok {
		a.TraceQueryEnd(ctx, c, d)
	}
}

func (t *tracerChain) TraceBatchStart(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	ctx = t.check.TraceBatchStart(ctx, c, d)
	if a, ok := t.app.(pgx.BatchTracer); ok {
		ctx = a.TraceBatchStart(ctx, c, d)
	}
	return ctx
}

func (t *tracerChain) TraceBatchQuery(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchQueryData) {
	if a, ok := t.app.(pgx.BatchTracer); ok {
		a.TraceBatchQuery(ctx, c, d)
	}
}

func (t *tracerChain) TraceBatchEnd(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchEndData) {
	if a, ok := t.app.(pgx.BatchTracer); ok {
		a.TraceBatchEnd(ctx, c, d)
	}
}

func (t *tracerChain) TraceCopyFromStart(ctx context.Context, c *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	ctx = t.check.TraceCopyFromStart(ctx, c, d)
	if a, ok := t.app.(pgx.CopyFromTracer); ok {
		ctx = a.TraceCopyFromStart(ctx, c, d)
	}
	return ctx
}

func (t *tracerChain) TraceCopyFromEnd(ctx context.Context, c *pgx.Conn, d pgx.TraceCopyFromEndData) {
	if a, ok := t.app.(pgx.CopyFromTracer); ok {
		a.TraceCopyFromEnd(ctx, c, d)
	}
}

func (t *tracerChain) TracePrepareStart(ctx context.Context, c *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	ctx = t.check.TracePrepareStart(ctx, c, d)
	if a, ok := t.app.(pgx.PrepareTracer); ok {
		ctx = a.TracePrepareStart(ctx, c, d)
	}
	return ctx
}

func (t *tracerChain) TracePrepareEnd(ctx context.Context, c *pgx.Conn, d pgx.TracePrepareEndData) {
	if a, ok := t.app.(pgx.PrepareTracer); ok {
		a.TracePrepareEnd(ctx, c, d)
	}
}

func (t *tracerChain) TraceConnectStart(ctx context.Context, d pgx.TraceConnectStartData) context.Context {
	if a, ok := t.app.(pgx.ConnectTracer); ok {
		ctx = a.TraceConnectStart(ctx, d)
	}
	return ctx
}

func (t *tracerChain) TraceConnectEnd(ctx context.Context, d pgx.TraceConnectEndData) {
	if a, ok := t.app.(pgx.ConnectTracer); ok {
		a.TraceConnectEnd(ctx, d)
	}
}

func (t *tracerChain) TraceAcquireStart(ctx context.Context, p *pgxpool.Pool, d pgxpool.TraceAcquireStartData) context.Context {
	ctx = t.check.TraceAcquireStart(ctx, p, d)
	if a, ok := t.app.(pgxpool.AcquireTracer); ok {
		ctx = a.TraceAcquireStart(ctx, p, d)
	}
	return ctx
}

func (t *tracerChain) TraceAcquireEnd(ctx context.Context, p *pgxpool.Pool, d pgxpool.TraceAcquireEndData) {
	if a, ok := t.app.(pgxpool.AcquireTracer); ok {
		a.TraceAcquireEnd(ctx, p, d)
	}
}

func (t *tracerChain) TraceRelease(p *pgxpool.Pool, d pgxpool.TraceReleaseData) {
	if a, ok := t.app.(pgxpool.ReleaseTracer); ok {
		a.TraceRelease(p, d)
	}
}
