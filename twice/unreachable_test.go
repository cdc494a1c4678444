package twice_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/twice"
)

// envUnreachableChild makes this test binary a child of
// TestAnUnreachableDatabaseURLFailsEveryCheck.
const envUnreachableChild = "TWICE_TEST_UNREACHABLE_CHILD"

// TestUnreachableChild is the child's side; it is skipped in a normal run.
// Every check it runs must fail with the check's error naming the server.
func TestUnreachableChild(t *testing.T) {
	if os.Getenv(envUnreachableChild) == "" {
		t.Skip("only run as the child of TestAnUnreachableDatabaseURLFailsEveryCheck")
	}
	for _, name := range []string{"first", "second"} {
		job := loyaltyJob(name, ledgerCTE)
		rep := twice.Check(context.Background(), job, twice.Only("sequential"))
		require.Error(t, rep.Err, "a check on an unreachable server cannot pass")
		msg := rep.Err.Error()
		require.Contains(t, msg, "127.0.0.1:1", "the error names the server")
		require.Contains(t, msg, "TWICE_DATABASE_URL is set, but its server cannot be used")
		require.Contains(t, msg, "unset TWICE_DATABASE_URL")
		require.NotContains(t, msg, "u:p@", "the password is masked")
		require.NotContains(t, msg, "local cluster started", "no fallback")
		t.Logf("check %s: %s", name, msg)
	}
}

// TestAnUnreachableDatabaseURLFailsEveryCheck: TWICE_DATABASE_URL set to a
// server nobody listens on, TWICE_POSTGRES unset: every check fails with an
// error naming 127.0.0.1:1; the tests never fall back to a local cluster.
func TestAnUnreachableDatabaseURLFailsEveryCheck(t *testing.T) {
	if os.Getenv(envUnreachableChild) != "" {
		t.Skip("a child does not start children")
	}
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestUnreachableChild$", "-test.count=1", "-test.v")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TWICE_POSTGRES=") && !strings.HasPrefix(kv, "TWICE_DATABASE_URL=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, envUnreachableChild+"=1", "TWICE_DATABASE_URL=postgres://u:p@127.0.0.1:1/db")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the child:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestUnreachableChild")
	for _, name := range []string{"first", "second"} {
		require.Contains(t, string(out), "check "+name+": twice: no PostgreSQL to run the check on: pgfixture: TWICE_DATABASE_URL is set, but its server cannot be used: cannot connect to postgres://u:xxxxx@127.0.0.1:1/db")
	}
}
