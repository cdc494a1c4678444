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

// TestTemplatesOfDeadProcessesAreDropped: a template built by a process
// that was killed (it never ran Close) is dropped by the next start on the
// server, as its fixture databases are; a live process's template and
// another host's stay. A live process that still uses a dropped template
// builds it again.
func TestTemplatesOfDeadProcessesAreDropped(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := sharedT(t)
	dead := pgserver.Self
	dead.PID = deadPID(t)
	dead.Start = "1"
	otherHost := pgserver.Self
	otherHost.Host = "elsewhere"
	mk := func(builder pgserver.Owner) (string, string) {
		hash := "stale template " + randHex(4) // not hexadecimal: a custom migrator's
		name := templateName(hash)
		_, err := srv.admin.Exec(ctx, "CREATE DATABASE "+name)
		require.NoError(t, err)
		_, err = srv.admin.Exec(ctx, "ALTER DATABASE "+name+" IS_TEMPLATE true")
		require.NoError(t, err)
		c := templateTag + hash + templateBuiltBy + builder.String()
		_, err = srv.admin.Exec(ctx, fmt.Sprintf("COMMENT ON DATABASE %s IS %s", name, quoteLiteral(c)))
		require.NoError(t, err)
		t.Cleanup(func() { _ = srv.dropTemplate(context.Background(), hash) })
		return hash, name
	}
	_, gone := mk(dead)
	_, live := mk(pgserver.Self)
	_, remote := mk(otherHost)
	require.NoError(t, srv.dropStale(ctx))
	exists := func(n string) bool {
		return scalar[bool](t, srv.admin, `SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)`, n)
	}
	// A parallel test's start may be dropping it at the same moment (it
	// holds the template's lock, so this start leaves it to that one).
	assert.Eventually(t, func() bool { return !exists(gone) }, 10*time.Second, 20*time.Millisecond, "a dead process's template is dropped")
	assert.True(t, exists(live), "a live process's template stays")
	assert.True(t, exists(remote), "another host's template stays")

	// A template this process built says so, and a dropped one is rebuilt.
	schema := SQL("CREATE TABLE stale_template_rebuilt (id int)")
	db, err := srv.CreateDB(ctx, schema)
	require.NoError(t, err)
	require.NoError(t, db.Close(ctx, false))
	comment := scalar[string](t, srv.admin, `SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1`, templateName(schema.Hash()))
	hash, builder, ok := parseTemplateComment(comment)
	require.True(t, ok, comment)
	assert.Equal(t, schema.Hash(), hash)
	assert.Equal(t, pgserver.Self, builder)
	require.NoError(t, srv.dropTemplate(ctx, schema.Hash()))
	db, err = srv.CreateDB(ctx, schema)
	require.NoError(t, err)
	require.NoError(t, db.Close(ctx, false))
}

// TestAShortPasswordIsMaskedAsAWord: a one-letter password is masked where
// it stands alone, never inside the words of an error ("postgres", "tcp").
func TestAShortPasswordIsMaskedAsAWord(t *testing.T) {
	t.Parallel()
	sc := newScrubber("p")
	assert.Equal(t, "cannot connect to postgres://u:xxxxx@h/db: dial tcp: refused (password xxxxx)",
		sc.String("cannot connect to postgres://u:p@h/db: dial tcp: refused (password p)"))
}
