package twice_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The application's pool configuration applies to the check's pools
// (issue 30).

var invoiceSchema = pgfixture.SQL(`
CREATE TYPE amount AS (currency text, cents bigint);
CREATE TABLE invoices (
  id    bigint PRIMARY KEY,
  total amount NOT NULL
);`)

// registerAmount is the application's AfterConnect: it registers the
// composite type amount, so that pgx can encode a Go value into it.
func registerAmount(ctx context.Context, c *pgx.Conn) error {
	t, err := c.LoadType(ctx, "amount")
	if err != nil {
		return err
	}
	c.TypeMap().RegisterType(t)
	return nil
}

// appPool is how the application configures its pool.
func appPool(cfg *pgxpool.Config) {
	cfg.AfterConnect = registerAmount
	cfg.ConnConfig.RuntimeParams["timezone"] = "Europe/Paris"
}

// writeInvoice binds a value to the composite column: pgx needs the type
// registered to encode it.
func writeInvoice(ctx context.Context, a *twice.Attempt) error {
	_, err := a.Pool.Exec(ctx, `INSERT INTO invoices (id, total) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`,
		pgtype.CompositeFields{"EUR", int64(1250)})
	return err
}

func TestTheApplicationsPoolConfigurationApplies(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "write invoice", Schema: invoiceSchema, Run: writeInvoice}

	// Without the application's configuration the clean run fails, and
	// the report says why and what to give the check.
	rep, tokens := findingTokens(t, job)
	require.Equal(t, []string{"once"}, tokens, rep.String())
	text := rep.String()
	require.Contains(t, text, "the job failed on a clean run")
	require.Contains(t, text, "unable to encode")
	require.Contains(t, text, "twice.ConfigurePool")

	// With it, every scenario passes, concurrent ones included, and the
	// statements AfterConnect sends on each new connection are no points.
	var connects atomic.Int64
	traced := &countingTracer{}
	rep, tokens = findingTokens(t, job, twice.ConfigurePool(func(cfg *pgxpool.Config) {
		appPool(cfg)
		cfg.ConnConfig.Tracer = traced
		after := cfg.AfterConnect
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			connects.Add(1)
			return after(ctx, c)
		}
	}))
	require.Empty(t, tokens, rep.String())
	require.Contains(t, rep.Tokens(), "overlap@1", "a concurrent scenario ran, on the second worker too")
	require.Len(t, rep.Reference.Attempts[0].Points, 1)
	require.Greater(t, connects.Load(), int64(1), "AfterConnect ran on the workers' connections")
	require.Greater(t, traced.n.Load(), int64(len(rep.Scenarios)), "the application's tracer saw the statements")
}

// countingTracer is an application's tracer: it counts the statements.
type countingTracer struct{ n atomic.Int64 }

func (c *countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// showTimezone reads a session setting the application's RuntimeParams set.
func showTimezone(ctx context.Context, a *twice.Attempt) error {
	var tz string
	if err := a.DB.QueryRowContext(ctx, `SHOW timezone`).Scan(&tz); err != nil {
		return err
	}
	_, err := a.Pool.Exec(ctx, `INSERT INTO invoices (id, total) VALUES (2, ROW($1, 0)) ON CONFLICT (id) DO NOTHING`, tz)
	return err
}

func TestTheApplicationsRuntimeParamsReachBothHandles(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "show timezone", Schema: invoiceSchema, Run: showTimezone}
	rep, tokens := findingTokens(t, job, twice.ConfigurePool(appPool), twice.WithoutConcurrency("one statement"))
	require.Empty(t, tokens, rep.String())
	require.Contains(t, rep.Reference.Snapshot.String(), "Europe/Paris")
}
