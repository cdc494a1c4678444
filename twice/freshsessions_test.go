package twice_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// Every scenario starts as the reference did: its first delivery runs on
// fresh sessions (issue 30).

func TestATempTableOfAnEarlierScenarioIsNotInTheNextOnesFirstDelivery(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[int][]bool{} // delivery number -> whether the temp table was there
	job := loyaltyJob("temp table", func(ctx context.Context, a *twice.Attempt) error {
		conn, err := a.Pool.Acquire(ctx) // one session for the whole delivery
		if err != nil {
			return err
		}
		defer conn.Release()
		look := func() (bool, error) {
			var there bool
			err := conn.QueryRow(ctx, `SELECT to_regclass('pg_temp.scratch') IS NOT NULL`).Scan(&there)
			return there, err
		}
		before, err := look()
		if err != nil {
			return err
		}
		// No ON COMMIT DROP: the table lives as long as the session.
		if _, err := conn.Exec(ctx, `CREATE TEMP TABLE IF NOT EXISTS scratch (n int)`); err != nil {
			return err
		}
		after, err := look()
		if err != nil {
			return err
		}
		if a.JobID == "job-1" { // a duplicate enqueue's job-2 runs after job-1 in the same scenario
			mu.Lock()
			seen[a.Number] = append(seen[a.Number], before)
			seen[-1] = append(seen[-1], after)
			mu.Unlock()
		}
		_, err = conn.Exec(ctx, `UPDATE customers SET points = 50 WHERE id = 77`)
		return err
	})
	rep, tokens := findingTokens(t, job, twice.WithoutConcurrency("the sessions are the point here"))
	require.Empty(t, tokens, rep.String())
	require.Greater(t, len(rep.Scenarios), 3)
	mu.Lock()
	defer mu.Unlock()
	for _, there := range seen[1] {
		require.False(t, there, "a first delivery saw the temp table of an earlier scenario")
	}
	require.GreaterOrEqual(t, len(seen[1]), len(rep.Scenarios), "every first delivery but a crash before its first point")
	// The look sees a temp table when there is one.
	require.NotEmpty(t, seen[-1])
	for _, there := range seen[-1] {
		require.True(t, there)
	}
}

// A session advisory lock the reference run takes and never releases does
// not make the next scenario's first delivery wait or fail.
func TestASessionLockOfAnEarlierScenarioIsGone(t *testing.T) {
	t.Parallel()
	job := loyaltyJob("session lock", func(ctx context.Context, a *twice.Attempt) error {
		var got bool
		if err := a.Pool.QueryRow(ctx, `SELECT pg_try_advisory_lock(77)`).Scan(&got); err != nil {
			return err
		}
		if !got && a.Number == 1 {
			return errSessionLocked
		}
		_, err := a.Pool.Exec(ctx, `UPDATE customers SET points = 50 WHERE id = 77`)
		return err
	})
	rep, tokens := findingTokens(t, job, twice.WithoutConcurrency("the sessions are the point here"))
	require.Empty(t, tokens, rep.String())
	for _, sr := range rep.Scenarios {
		require.NotErrorIs(t, sr.Attempts[0].Err, errSessionLocked, sr.Scenario.Token())
	}
}

var errSessionLocked = errorString("the lock of an earlier scenario's session is still held")

type errorString string

func (e errorString) Error() string { return string(e) }

// A job may change the schema: the reset restores the migrated schema
// without a 57P01 reaching the job.

var ddlSchema = pgfixture.SQL(`CREATE TABLE customers (id bigint PRIMARY KEY, name text NOT NULL)`)

func addNickname(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `ALTER TABLE customers ADD COLUMN IF NOT EXISTS nickname text`); err != nil {
		return err
	}
	if _, err := a.Pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS audit (what text PRIMARY KEY)`); err != nil {
		return err
	}
	if _, err := a.Pool.Exec(ctx, `INSERT INTO audit VALUES ('nickname added') ON CONFLICT DO NOTHING`); err != nil {
		return err
	}
	_, err := a.Pool.Exec(ctx, `UPDATE customers SET nickname = 'Annie' WHERE id = 77`)
	return err
}

func TestAnIdempotentSchemaChangePasses(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "add nickname", Schema: ddlSchema, Seed: twice.SeedSQL(`INSERT INTO customers VALUES (77, 'Ann')`), Run: addNickname}
	// (Each reset after a schema change clones the database again: a few
	// scenarios are enough here.)
	rep, tokens := findingTokens(t, job, twice.MaxDeliveries(2), twice.WithoutConcurrency("the reset is the point here"))
	require.Empty(t, tokens, rep.String())
	require.Contains(t, rep.Tokens(), "sequential")
	text := rep.String()
	for _, sr := range rep.Scenarios {
		for _, a := range sr.Attempts {
			if a.Err != nil {
				text += "\n" + a.Err.Error()
			}
		}
	}
	require.False(t, strings.Contains(text, "57P01"), text)
	require.False(t, strings.Contains(text, "terminating connection"), text)
	require.Contains(t, rep.Reference.Snapshot.String(), "nickname='Annie'")
}
