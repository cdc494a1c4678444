package twice_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The non-atomic ledger (ledgerTwoStatements: the ledger row, then the
// points, no transaction) on a pool the job opens itself.

// ledgerOnOwnPool runs the two statements on a pool opened from dsn(a).
func ledgerOnOwnPool(dsn func(a *twice.Attempt) string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		pool, err := pgxpool.New(ctx, dsn(a))
		if err != nil {
			return err
		}
		defer pool.Close()
		tag, err := pool.Exec(ctx, `INSERT INTO points_ledger (customer_id, order_id, reason, points)
VALUES ($1, $2, 'order_reward', 50) ON CONFLICT (order_id, reason) DO NOTHING`, 77, 9812)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = pool.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = $1`, 77)
		return err
	}
}

// handBuiltDSN is the connection string a user writes from what they know
// of the check's database.
func handBuiltDSN(a *twice.Attempt) string {
	c := a.Pool.Config().ConnConfig
	dsn := fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", c.Host, c.Port, c.User, c.Database)
	if c.Password != "" {
		dsn += " password=" + c.Password
	}
	return dsn
}

// checksURL is the check's own connection string, as its handle tells it.
func checksURL(a *twice.Attempt) string { return a.Pool.Config().ConnString() }

// clientAddr is the address the server sees this process connect from
// ("" over a Unix socket), as a report names a session.
func clientAddr(t *testing.T) string {
	t.Helper()
	srv, err := pgfixture.Shared(t.Context())
	require.NoError(t, err)
	db, err := srv.CreateDB(t.Context(), loyaltySchema)
	require.NoError(t, err)
	defer db.Close(context.Background(), false)
	var addr string
	require.NoError(t, db.Pool().QueryRow(t.Context(), `SELECT coalesce(host(inet_client_addr()), '')`).Scan(&addr))
	return addr
}

func sessionLine(addr string) string {
	if addr == "" {
		return "a session with no application_name, over a Unix socket"
	}
	return "a session with no application_name, from " + addr
}

// TestAJobOnItsOwnPoolIsNeverIdempotent: the non-atomic ledger on a pool
// of its own, from a DSN built by hand or from the check's own URL, is
// reported on its clean run with the session the check saw, never as
// idempotent; the check plays nothing else, since it could see nothing.
func TestAJobOnItsOwnPoolIsNeverIdempotent(t *testing.T) {
	t.Parallel()
	addr := clientAddr(t)
	for _, tc := range []struct {
		name string
		dsn  func(*twice.Attempt) string
	}{
		{"DSN built by hand", handBuiltDSN},
		{"the check's URL", checksURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep, tokens := findingTokens(t, loyaltyJob("ledger on its own pool", ledgerOnOwnPool(tc.dsn)))
			require.Equal(t, []string{"once"}, tokens, rep.String())
			f := rep.Findings[0]
			require.Equal(t, "the job opened its own connection to the check's database: the reference run (one clean delivery)", f.Headline)
			require.Len(t, f.Problems, 1)
			require.Equal(t, twice.ProblemForeignSession, f.Problems[0].Kind)
			require.Equal(t, "the job opened its own connection to the check's database: its statements are not seen\n"+
				"    "+sessionLine(addr)+"\n"+
				"    the clean run changed tables customers, points_ledger although the check saw no statement of it\n"+
				"  run every statement on a.Pool or a.DB (a pool of your own built with pgxpool.NewWithConfig(ctx, a.Pool.Config()) is seen too), not on a pool opened from a connection string",
				f.Problems[0].Text)
			require.Len(t, rep.Reference.Sessions, 1)
			require.Empty(t, rep.Scenarios, "nothing is played on a run the check could not see")
		})
	}
}

// TestAFailedAssertionNamesTheOwnConnection: what a test prints.
func TestAFailedAssertionNamesTheOwnConnection(t *testing.T) {
	t.Parallel()
	addr := clientAddr(t)
	tb := &fakeTB{name: "TestLedger"}
	twice.AssertIdempotent(tb, loyaltyJob("ledger on its own pool", ledgerOnOwnPool(checksURL)))
	require.Empty(t, tb.errors)
	require.Len(t, tb.fatals, 1)
	require.Equal(t, "twice: ledger on its own pool: 1 of 1 scenarios broke a promise\n\n"+
		"the job opened its own connection to the check's database: the reference run (one clean delivery)\n\n"+
		"timeline:\n"+
		"  attempt 1 of job-1:\n"+
		"         done\n\n"+
		"the job opened its own connection to the check's database: its statements are not seen\n"+
		"    "+sessionLine(addr)+"\n"+
		"    the clean run changed tables customers, points_ledger although the check saw no statement of it\n"+
		"  run every statement on a.Pool or a.DB (a pool of your own built with pgxpool.NewWithConfig(ctx, a.Pool.Config()) is seen too), not on a pool opened from a connection string\n\n"+
		"replay: go test ./twice -run '^TestLedger$' -twice.run=once", tb.fatals[0])
}

// TestReadsOnItsOwnPoolAreFound: a job that reads on a pool of its own and
// writes on a.Pool changes nothing the check cannot see, but its reads are
// not points: the session is found while the clean run runs.
func TestReadsOnItsOwnPoolAreFound(t *testing.T) {
	t.Parallel()
	addr := clientAddr(t)
	job := loyaltyJob("reads on its own pool", func(ctx context.Context, a *twice.Attempt) error {
		conn, err := pgx.Connect(ctx, a.Pool.Config().ConnString())
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		var points int
		if err := conn.QueryRow(ctx, `SELECT points FROM customers WHERE id = 77`).Scan(&points); err != nil {
			return err
		}
		_, err = a.Pool.Exec(ctx, `UPDATE customers SET points = $1 + 50 WHERE id = 77`, points)
		return err
	})
	rep, tokens := findingTokens(t, job)
	require.Equal(t, []string{"once"}, tokens, rep.String())
	require.Equal(t, []string{"the job opened its own connection to the check's database: its statements are not seen\n" +
		"    " + sessionLine(addr) + "\n" +
		"  run every statement on a.Pool or a.DB (a pool of your own built with pgxpool.NewWithConfig(ctx, a.Pool.Config()) is seen too), not on a pool opened from a connection string"},
		problems(rep.Findings[0]))
}

// TestAPoolBuiltFromTheHandlesConfigIsSeen: pgxpool.NewWithConfig(ctx,
// a.Pool.Config()) keeps the check's instrumentation, so the non-atomic
// ledger on it is flagged by crash@2 as on a.Pool, and the ledger in one
// transaction on it passes.
func TestAPoolBuiltFromTheHandlesConfigIsSeen(t *testing.T) {
	t.Parallel()
	onConfigPool := func(run func(context.Context, *twice.Attempt) error) func(context.Context, *twice.Attempt) error {
		return func(ctx context.Context, a *twice.Attempt) error {
			pool, err := pgxpool.NewWithConfig(ctx, a.Pool.Config())
			if err != nil {
				return err
			}
			defer pool.Close()
			own := *a
			own.Pool = pool
			return run(ctx, &own)
		}
	}
	rep, tokens := findingTokens(t, loyaltyJob("ledger, two statements, pool from the config", onConfigPool(ledgerTwoStatements)))
	require.Equal(t, []string{"crash@2"}, tokens, rep.String())
	require.Contains(t, rep.Findings[0].Headline, "crash before point 2 of 2 (UPDATE customers SET points = points + 50 WHERE id = $1), then redelivery")

	rep, tokens = findingTokens(t, loyaltyJob("ledger, one transaction, pool from the config", onConfigPool(ledgerInTransaction)))
	require.Empty(t, tokens, rep.String())
	require.Equal(t, []string{"sequential", "crash@1", "crash@3", "crash@end", "duplicate-enqueue"}, withoutConcurrent(rep.Tokens()))
}

// TestTheHandlesNameTheChecksDatabase: the connection string a job reads
// from its pool names the database the pool is on.
func TestTheHandlesNameTheChecksDatabase(t *testing.T) {
	t.Parallel()
	var named, current string
	job := loyaltyJob("reads its connection string", func(ctx context.Context, a *twice.Attempt) error {
		cfg, err := pgx.ParseConfig(a.Pool.Config().ConnString())
		if err != nil {
			return err
		}
		named = cfg.Database
		return a.Pool.QueryRow(ctx, `SELECT current_database()`).Scan(&current)
	})
	rep := twice.Check(context.Background(), job, twice.Only("sequential"))
	require.True(t, rep.OK(), rep.String())
	require.NotEmpty(t, current)
	require.Equal(t, current, named)
}

// leakyPools keeps the pools a job never closes, to close them when the
// test ends.
type leakyPools struct {
	mu    sync.Mutex
	pools []*pgxpool.Pool
}

func (l *leakyPools) open(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err == nil {
		l.mu.Lock()
		l.pools = append(l.pools, pool)
		l.mu.Unlock()
	}
	return pool, err
}

func (l *leakyPools) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.pools {
		p.Close()
	}
}

// TestAConnectionOpenedOnRedeliveryIsFound: a job whose clean run uses its
// handles but that opens a pool of its own when delivered again (and never
// closes it) is flagged by the scenarios that redeliver it, with the session.
func TestAConnectionOpenedOnRedeliveryIsFound(t *testing.T) {
	t.Parallel()
	addr := clientAddr(t)
	leaks := &leakyPools{}
	t.Cleanup(leaks.close)
	job := loyaltyJob("own pool on redelivery", func(ctx context.Context, a *twice.Attempt) error {
		if a.Number == 1 {
			return ledgerCTE(ctx, a)
		}
		pool, err := leaks.open(ctx, a.Pool.Config().ConnString())
		if err != nil {
			return err
		}
		_, err = pool.Exec(ctx, ledgerCTESQL, 77, 9812)
		return err
	})
	rep, tokens := findingTokens(t, job, twice.WithoutConcurrency("the redeliveries are what this test is about"))
	require.Equal(t, []string{"sequential", "crash@1", "crash@end"}, tokens, rep.String())
	for _, f := range rep.Findings {
		require.Equal(t, []string{"the job opened its own connection to the check's database: its statements are not seen\n" +
			"    " + sessionLine(addr) + "\n" +
			"  run every statement on a.Pool or a.DB (a pool of your own built with pgxpool.NewWithConfig(ctx, a.Pool.Config()) is seen too), not on a pool opened from a connection string"},
			problems(f), f.Token)
		require.Empty(t, f.Database, f.Token)
	}
}

// TestALeftoverSessionIsNotBlamedOnTheNextCheck: the sessions a job leaves
// open are ended when its check closes, so the next check on the database
// (recycled warm for the same schema) does not see them.
func TestALeftoverSessionIsNotBlamedOnTheNextCheck(t *testing.T) {
	// Not parallel: the second check should get the database the first
	// one handed back.
	leaks := &leakyPools{}
	t.Cleanup(leaks.close)
	leaky := loyaltyJob("leaks its own pool", func(ctx context.Context, a *twice.Attempt) error {
		pool, err := leaks.open(ctx, a.Pool.Config().ConnString())
		if err != nil {
			return err
		}
		_, err = pool.Exec(ctx, ledgerCTESQL, 77, 9812)
		return err
	})
	rep, tokens := findingTokens(t, leaky)
	require.Equal(t, []string{"once"}, tokens, rep.String())
	require.Equal(t, twice.ProblemForeignSession, rep.Findings[0].Problems[0].Kind)

	rep, tokens = findingTokens(t, loyaltyJob("ledger CTE", ledgerCTE))
	require.Empty(t, tokens, rep.String())
}
