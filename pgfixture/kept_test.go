package pgfixture

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/pgserver"
)

// TestKeptDatabasesDoNotPileUp: a database kept under a label replaces the
// one kept before under that label; a kept database older than
// TWICE_KEPT_MAX_AGE is dropped when a server connects; TWICE_DROP_KEPT=1
// drops every kept one.
func TestKeptDatabasesDoNotPileUp(t *testing.T) {
	ctx := context.Background()
	srv := privateServer(t)
	schema := SQL(`CREATE TABLE t (id int PRIMARY KEY)`)
	exists := func(n string) bool {
		return scalar[bool](t, srv.admin, `SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)`, n)
	}
	keepUnder := func(label string) string {
		db, err := srv.CreateDB(ctx, schema)
		require.NoError(t, err)
		db.Label(label)
		require.NoError(t, db.Close(ctx, true))
		t.Cleanup(func() { _ = srv.dropDatabase(context.Background(), db.Name()) })
		return db.Name()
	}

	first := keepUnder("TestRefund")
	other := keepUnder("TestPayout")
	second := keepUnder("TestRefund")
	assert.False(t, exists(first), "the test's earlier kept database is replaced")
	assert.True(t, exists(second), "the test's new kept database stays")
	assert.True(t, exists(other), "another test's kept database stays")

	mk := func(suffix, comment string) string {
		name := fmt.Sprintf("%sf0_kept%s_%s", dbPrefix, suffix, randHex(3))
		_, err := srv.admin.Exec(ctx, "CREATE DATABASE "+name)
		require.NoError(t, err)
		_, err = srv.admin.Exec(ctx, fmt.Sprintf("COMMENT ON DATABASE %s IS %s", name, quoteLiteral(comment)))
		require.NoError(t, err)
		t.Cleanup(func() { _ = srv.dropDatabase(context.Background(), name) })
		return name
	}
	old := mk("old", pgserver.Self.String()+keptMark(time.Now().Add(-100*time.Hour), "TestOld"))
	recent := mk("recent", pgserver.Self.String()+keptMark(time.Now().Add(-time.Hour), "TestRecent"))
	legacy := mk("legacy", pgserver.Self.String()+" kept")
	require.NoError(t, srv.dropStale(ctx))
	assert.False(t, exists(old), "kept longer than 72h: dropped")
	assert.True(t, exists(recent), "kept an hour ago: stays")
	assert.True(t, exists(legacy), "kept without a time: stays")

	t.Setenv(envKeptMaxAge, "30m")
	require.NoError(t, srv.dropStale(ctx))
	assert.False(t, exists(recent), "TWICE_KEPT_MAX_AGE=30m drops one kept an hour ago")

	t.Setenv(envDropKept, "1")
	require.NoError(t, srv.dropStale(ctx))
	for _, n := range []string{second, other, legacy} {
		assert.False(t, exists(n), "TWICE_DROP_KEPT=1 drops every kept database: %s", n)
	}
}

func TestKeptInfo(t *testing.T) {
	t.Parallel()
	at := time.Unix(1764547200, 0)
	kept, gotAt, label := keptInfo(pgserver.Self.String() + keptMark(at, "TestX/with space · job"))
	require.True(t, kept)
	require.True(t, gotAt.Equal(at))
	require.Equal(t, "TestX/with space · job", label)
	kept, _, _ = keptInfo(pgserver.Self.String())
	require.False(t, kept)
}

// privateServer is a local cluster of the test's own, so that what the test
// drops (every kept database) can belong to nobody else.
func privateServer(t *testing.T) *Server {
	t.Helper()
	needLocalBins(t)
	srv, err := StartLocal(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close(context.Background())) })
	return srv
}
