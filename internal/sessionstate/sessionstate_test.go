package sessionstate

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
)

// Read names each kind of state a session keeps across transactions, in
// its order; what SET LOCAL and a transaction-level advisory lock left ends
// with their transaction; the SETs are read only when asked.
func TestReadNamesWhatOutlivesATransaction(t *testing.T) {
	db := pgfixture.New(t, pgfixture.SQL("CREATE TABLE t (id int)"))
	ctx := context.Background()
	c, err := pgx.ConnectConfig(ctx, db.ConnConfig())
	require.NoError(t, err)
	defer c.Close(ctx)

	pid, state, err := Read(ctx, c, true)
	require.NoError(t, err)
	require.NotZero(t, pid)
	require.Empty(t, state, "a fresh session")

	for _, sql := range []string{
		"CREATE TEMP TABLE scratch (x int)",
		"SELECT pg_advisory_lock(42)",
		"SELECT pg_advisory_lock_shared(1, -2)",
		"SET work_mem = '7MB'",
		"PREPARE q AS SELECT 1",
		"LISTEN orders",
		"BEGIN; SET LOCAL statement_timeout = 5; SELECT pg_advisory_xact_lock(7); COMMIT",
	} {
		_, err := c.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		require.NoError(t, err, sql)
	}
	got, state, err := Read(ctx, c, true)
	require.NoError(t, err)
	require.Equal(t, pid, got)
	require.Equal(t, []string{"temporary table scratch", "advisory lock (42)", "advisory lock (1, -2, shared)",
		"prepared statement q", "LISTEN orders", "SET work_mem"}, state)

	_, state, err = Read(ctx, c, false)
	require.NoError(t, err)
	require.NotContains(t, state, "SET work_mem")
}

func TestSetsSession(t *testing.T) {
	for label, want := range map[string]bool{
		"SET search_path = app":                                true,
		"set session work_mem = '1MB'":                         true,
		"SELECT set_config('app.user', '1', false)":            true,
		"BEGIN; SET LOCAL lock_timeout = 1; COMMIT":            false,
		"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE":         false,
		"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY": false,
		"SET CONSTRAINTS ALL DEFERRED":                         false,
		"UPDATE t SET id = 1":                                  false,
	} {
		if got := SetsSession(label); got != want {
			t.Errorf("SetsSession(%q) = %v, want %v", label, got, want)
		}
	}
}
