package twice_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// loadCase is a check with the exact result it must give: the tokens of
// every scenario that ran and of those that broke a promise.
type loadCase struct {
	job      twice.Job
	opts     []twice.Option
	tokens   []string
	findings []string
}

// loadCases mixes jobs that must pass with jobs that must be flagged, on
// three schemas, so checks of one schema reuse each other's warm databases
// while checks of the others run. The budget is fixed, so the sampled
// interleavings do not depend on -short or -twice.budget; every crash point
// plays (EveryCrashPoint), so the token lists name every point.
func loadCases() []loadCase {
	quick, every := twice.WithBudget(twice.QuickBudget), twice.EveryCrashPoint()
	return []loadCase{
		{
			job:    loyaltyJob("ledger CTE", ledgerCTE),
			opts:   []twice.Option{quick, every},
			tokens: []string{"sequential", "crash@1", "crash@end", "duplicate-enqueue", "overlap@1", "concurrent:A2B2", "concurrent:BABA", "concurrent:B2A2"},
		},
		{
			job:  loyaltyJob("ledger, one transaction", ledgerInTransaction),
			opts: []twice.Option{quick, every},
			tokens: []string{"sequential", "crash@1", "crash@2", "crash@3", "crash@4", "crash@end", "duplicate-enqueue",
				"overlap@1", "overlap@2", "overlap@3", "concurrent:B3A2BA", "concurrent:A4B3", "concurrent:B4A3", "concurrent:B2A2B2A", "concurrent:BA4B2"},
		},
		{
			job:  ordersJob("invoice: guarded update", guardedInvoice),
			opts: append([]twice.Option{quick, every}, invoiceOpts...),
			tokens: []string{"sequential", "crash@1", "crash@2", "crash@3", "crash@end", "duplicate-enqueue", "crash-after@3", "reply-lost@3",
				"overlap@1", "overlap@2", "overlap@3", "overlap@4", "concurrent:B5A2", "concurrent:A5B2", "concurrent:B4A2B", "concurrent:BA5B3",
				"concurrent:B2A5B2", "concurrent:B3A3BAB"},
		},
		{
			job:  ledgerNoUniqueJob("read-modify-write, FOR UPDATE", readModifyWrite(true)),
			opts: []twice.Option{quick, every},
			tokens: []string{"sequential", "crash@1", "crash@2", "crash@3", "crash@4", "crash@5", "crash@6", "crash@end", "duplicate-enqueue",
				"overlap@1", "overlap@2", "overlap@3", "overlap@4", "overlap@5", "concurrent:B6A4", "concurrent:B5A2BA2", "concurrent:A6B4",
				"concurrent:BA6B3", "concurrent:B2A2B4A2", "concurrent:B4A2B2A2"},
		},
		{
			job:      loyaltyJob("increment points", incrementPoints),
			opts:     []twice.Option{quick, every},
			tokens:   []string{"sequential", "crash@1", "crash@end", "duplicate-enqueue", "overlap@1"},
			findings: []string{"sequential", "crash@end", "duplicate-enqueue", "overlap@1"},
		},
		{
			job:      ledgerNoUniqueJob("ledger: check, then act", checkThenAct),
			opts:     []twice.Option{quick, every},
			tokens:   []string{"sequential", "crash@1", "crash@2", "crash@3", "crash@4", "crash@5", "crash@end", "duplicate-enqueue", "overlap@1", "overlap@2"},
			findings: []string{"overlap@2"},
		},
		{
			job:      ordersJob("invoice: unguarded update", unguardedInvoice),
			opts:     append([]twice.Option{quick, every}, invoiceOpts...),
			tokens:   []string{"sequential", "crash@1", "crash@2", "crash@3", "crash@end", "duplicate-enqueue", "crash-after@3", "reply-lost@3", "overlap@1"},
			findings: []string{"overlap@1"},
		},
		{
			job:  loyaltyJob("ledger, two statements", ledgerTwoStatements),
			opts: []twice.Option{quick, every},
			tokens: []string{"sequential", "crash@1", "crash@2", "crash@end", "duplicate-enqueue", "overlap@1", "overlap@2", "overlap@3",
				"concurrent:B3A2B", "concurrent:A4B2", "concurrent:B4A2", "concurrent:B2A2B2", "concurrent:BABAB2"},
			findings: []string{"crash@2"},
		},
	}
}

// requireResult checks a report against its case.
func requireResult(t *testing.T, c loadCase, rep *twice.Report) {
	t.Helper()
	require.NoError(t, rep.Err)
	require.Equal(t, c.tokens, rep.Tokens(), rep.String())
	var found []string
	for _, f := range rep.Findings {
		found = append(found, f.Token)
	}
	require.Equal(t, c.findings, found, rep.String())
	require.Empty(t, rep.KeptDatabase)
}

// Eight checks at once on the one shared server, each with concurrent
// scenarios (so two workers' worth of connections each), stay isolated:
// each gives exactly the result it gives alone. Each subtest starts its
// check before it calls t.Parallel, so all eight run at once whatever
// -parallel is; the subtests then wait for their own report.
func TestEightParallelChecksWithConcurrentScenarios(t *testing.T) {
	cases := loadCases()
	require.Len(t, cases, 8)
	start := time.Now()
	for _, c := range cases {
		t.Run(c.job.Name, func(t *testing.T) {
			done := make(chan *twice.Report, 1)
			go func() { done <- twice.Check(context.Background(), c.job, c.opts...) }()
			t.Parallel()
			requireResult(t, c, <-done)
		})
	}
	t.Cleanup(func() { t.Logf("8 checks in %s", time.Since(start).Round(10*time.Millisecond)) })
}

// span records when a check's job first started and last returned.
type span struct {
	mu         sync.Mutex
	start, end time.Time
}

// timed wraps job so that every attempt widens s.
func (s *span) timed(job twice.Job) twice.Job {
	run := job.Run
	job.Run = func(ctx context.Context, a *twice.Attempt) error {
		s.mu.Lock()
		if s.start.IsZero() {
			s.start = time.Now()
		}
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.end = time.Now()
			s.mu.Unlock()
		}()
		return run(ctx, a)
	}
	return job
}

// On a server started with max_connections=32 pgfixture has room for 21
// connections: a check under SERIALIZABLE (three workers of 8 and the
// database's 4: 28) can never run there and fails at once, saying what to
// do; checks under READ COMMITTED (two workers: 20) fit one at a time, so
// three at once wait for each other and all pass.
func TestChecksOnASmallServer(t *testing.T) {
	t.Parallel()
	ctx, srv := privateServer(t, "max_connections=32")

	t.Run("too large for the server", func(t *testing.T) {
		job := ledgerNoUniqueJob("ledger: check, then act", checkThenAct)
		begin := time.Now()
		rep := twice.Check(ctx, job, twice.OnServer(srv), twice.Isolation(twice.Serializable))
		require.ErrorIs(t, rep.Err, pgfixture.ErrConnectionLimit)
		require.EqualError(t, rep.Err, `twice: not enough connections on the server for this check: `+
			`pgfixture: twice.Check of job "ledger: check, then act" (3 workers of up to 8 connections: the check's own and two for the concurrent scenarios) `+
			`may open up to 28 connections (24 of its own and 4 for its fixture database's control pool) `+
			`but the server at `+srv.URL()+` has room for 21 `+
			`(max_connections=32, minus 3 reserved for superusers, 0 held by other clients at start and 8 for pgfixture's admin pool); `+
			`raise max_connections to at least 39 (postgres -c max_connections=39, or ALTER SYSTEM SET max_connections = 39 and restart the server); `+
			`or, where the server cannot change, twice.WithoutConcurrency(reason) makes this check need 12`)
		require.Less(t, time.Since(begin), 5*time.Second, "fails at once, without waiting")
		require.False(t, rep.OK())
		require.Contains(t, rep.String(), "raise max_connections to at least 39")
	})

	t.Run("checks that fit one at a time wait their turn", func(t *testing.T) {
		c := loadCases()[5] // check, then act: flagged by overlap@2
		reports := make([]*twice.Report, 3)
		spans := make([]*span, 3)
		var wg sync.WaitGroup
		for i := range reports {
			spans[i] = &span{}
			job := spans[i].timed(c.job)
			wg.Go(func() {
				reports[i] = twice.Check(ctx, job, append([]twice.Option{twice.OnServer(srv)}, c.opts...)...)
			})
		}
		wg.Wait()
		for i, rep := range reports {
			t.Run(fmt.Sprint("check ", i+1), func(t *testing.T) { requireResult(t, c, rep) })
		}
		// One at a time: no check's job ran while another check's did.
		for i := range spans {
			for j := range i {
				a, b := spans[i], spans[j]
				overlap := a.start.Before(b.end) && b.start.Before(a.end)
				require.False(t, overlap, "checks %d and %d ran at the same time: %s–%s and %s–%s", j+1, i+1,
					b.start.Format("15:04:05.000"), b.end.Format("15:04:05.000"), a.start.Format("15:04:05.000"), a.end.Format("15:04:05.000"))
			}
		}
	})
}

// When other clients fill the server after pgfixture measured its room, an
// attempt's connection is refused ("too many clients"): the check says so in
// Report.Err, with what to do, instead of reporting the job as broken.
func TestARefusedConnectionIsTheCheckErrorNotAFinding(t *testing.T) {
	t.Parallel()
	ctx, srv := privateServer(t, "max_connections=40")

	var others []*pgx.Conn // the other clients, opened by the job itself
	defer func() {
		for _, c := range others {
			_ = c.Close(context.Background())
		}
	}()
	job := loyaltyJob("ledger CTE", func(ctx context.Context, a *twice.Attempt) error {
		if others == nil {
			cfg, err := pgx.ParseConfig(srv.URL())
			if err != nil {
				return err
			}
			cfg.Database = a.Pool.Config().ConnConfig.Database
			for len(others) < 100 {
				c, err := pgx.ConnectConfig(ctx, cfg)
				if err != nil {
					break // the server is full
				}
				others = append(others, c)
			}
		}
		return ledgerCTE(ctx, a)
	})
	rep := twice.Check(ctx, job, twice.OnServer(srv), twice.KeepFailedDatabase())
	require.NotEmpty(t, others)
	require.ErrorIs(t, rep.Err, pgfixture.ErrTooManyClients, rep.String())
	require.Empty(t, rep.Findings)
	require.Empty(t, rep.KeptDatabase, "a refused check keeps no database: it would only fill the server further")
	for _, c := range others {
		_ = c.Close(context.Background())
	}
	others = others[:0:0]
	admin, err := pgx.Connect(ctx, srv.URL())
	require.NoError(t, err)
	defer func() { _ = admin.Close(context.Background()) }()
	var kept int // a recycled database stays warm until the server closes; a kept one would stay 72 hours
	require.NoError(t, admin.QueryRow(ctx, `SELECT count(*) FROM pg_database
		WHERE datname LIKE 'twicekit\_f%' AND shobj_description(oid, 'pg_database') LIKE '% kept%'`).Scan(&kept))
	require.Zero(t, kept, "the refused check's database is not kept")
	require.Contains(t, rep.Err.Error(), "twice: attempt 1 of job-1 of scenario once could not connect: pgfixture: the server at "+srv.URL()+
		" refused a connection: sorry, too many clients already (SQLSTATE 53300). pgfixture keeps within the 29 connections")
	require.Contains(t, rep.Err.Error(), "raise max_connections")
}
