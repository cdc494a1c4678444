package twice_test

import (
	"context"
	"database/sql/driver"
	"sync"
	"testing"

	"github.com/lib/pq"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/twice"
)

// noticedConnector is an application's lib/pq connector with an option of
// its own, a notice handler, that records the notices PostgreSQL sends.
type noticedConnector struct {
	mu      sync.Mutex
	notices []string
}

func (n *noticedConnector) open(dsn string) (driver.Connector, error) {
	c, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return pq.ConnectorWithNoticeHandler(c, func(e *pq.Error) {
		n.mu.Lock()
		n.notices = append(n.notices, e.Message)
		n.mu.Unlock()
	}), nil
}

func (n *noticedConnector) seen() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.notices...)
}

// noticeFirst raises a notice, then runs job.
func noticeFirst(job func(ctx context.Context, a *twice.Attempt) error) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		if _, err := a.DB.ExecContext(ctx, `DO $$ BEGIN RAISE NOTICE 'adding points'; END $$`); err != nil {
			return err
		}
		return job(ctx, a)
	}
}

// TestSQLConnectorKeepsTheApplicationsOptions: a.DB runs on the
// application's own connector, its notice handler included, and its
// statements are points as SQLDriver's are: the increment is flagged, the
// ledger in one transaction passes.
func TestSQLConnectorKeepsTheApplicationsOptions(t *testing.T) {
	t.Parallel()
	n := &noticedConnector{}
	rep, tokens := findingTokens(t, loyaltyJob("increment points (the app's connector)", noticeFirst(incrementPointsSQL)),
		twice.SQLConnector(n.open), twice.WithoutConcurrency("sequential shows it"))
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue"}, tokens, rep.String())
	require.Equal(t, "DO $$ BEGIN RAISE NOTICE 'adding points'; END $$", rep.Reference.Attempts[0].Points[0].Label)
	require.Contains(t, n.seen(), "adding points")

	rep, tokens = findingTokens(t, loyaltyJob("ledger, one transaction (the app's connector)", noticeFirst(ledgerInTransactionSQL)),
		twice.SQLConnector(n.open), twice.WithoutConcurrency("sequential shows it"))
	require.Empty(t, tokens, rep.String())
}

func TestSQLConnectorErrorsEndTheCheck(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), loyaltyJob("ledger", ledgerInTransactionSQL),
		twice.SQLConnector(func(string) (driver.Connector, error) { return nil, nil }))
	require.EqualError(t, rep.Err, "twice: SQLConnector: the connector is nil")
}
