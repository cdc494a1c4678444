package twice_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/longtest"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// envKillChild makes this test binary a child of
// TestAKilledCheckLeavesNothingTheNextRunUses: "hang" starts a check whose
// job blocks, "pass" runs a check to its end.
const envKillChild = "TWICE_TEST_KILL_CHILD"

// TestKillChild is the child's side; it is skipped in a normal run.
func TestKillChild(t *testing.T) {
	mode := os.Getenv(envKillChild)
	if mode == "" {
		t.Skip("only run as the child of TestAKilledCheckLeavesNothingTheNextRunUses")
	}
	job := loyaltyJob("ledger CTE", ledgerCTE)
	if mode == "hang" {
		job.Run = func(ctx context.Context, a *twice.Attempt) error {
			fmt.Printf("child ready pid=%d\n", os.Getpid())
			<-ctx.Done() // the parent kills the process here, mid-check
			return ctx.Err()
		}
	}
	twice.AssertIdempotent(t, job, twice.AttemptTimeout(2*time.Minute), twice.WithoutConcurrency("the kill test needs one attempt"))
}

// TestAKilledCheckLeavesNothingTheNextRunUses kills a test binary (SIGKILL)
// in the middle of a check on a server it shares with others (dsn mode),
// and shows that the next test binary on that server drops what the dead
// one left instead of using it.
func TestAKilledCheckLeavesNothingTheNextRunUses(t *testing.T) {
	if os.Getenv(envKillChild) != "" {
		t.Skip("a child does not start children")
	}
	longtest.Skip(t, "starts two test processes")
	// A server of this test's own: on a shared one, another test binary's
	// start could drop the dead child's databases before the next run does.
	ctx, srv := privateServer(t)
	db, err := srv.CreateDB(ctx, pgfixture.SQL(`SELECT 1`))
	require.NoError(t, err)
	defer func() { _ = db.Close(context.Background(), false) }()
	serverURL := adminURL(db)
	admin := db.Pool()

	// The first child: a check whose job blocks; killed once it runs.
	child := childCommand(ctx, serverURL, "hang")
	stdout, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "child ready ") {
				ready <- sc.Text()
				break
			}
		}
		for sc.Scan() { // drain, so the child never blocks on a full pipe
		}
	}()
	select {
	case line := <-ready:
		require.Equal(t, fmt.Sprintf("child ready pid=%d", child.Process.Pid), line)
	case <-ctx.Done():
		t.Fatalf("the child never reached its job: %v", ctx.Err())
	}
	left := databasesOf(t, admin, child.Process.Pid)
	require.NotEmpty(t, left, "the child's check has a database while it runs")

	require.NoError(t, child.Process.Kill()) // SIGKILL: no cleanup of any kind
	_ = child.Wait()
	require.Equal(t, left, databasesOf(t, admin, child.Process.Pid), "a killed process cleans nothing up")

	// The next run on the server drops them when it starts, then checks.
	next := childCommand(ctx, serverURL, "pass")
	out, err := next.CombinedOutput()
	require.NoError(t, err, "the next run:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestKillChild")
	require.Empty(t, databasesOf(t, admin, child.Process.Pid), "the dead process's databases were dropped")
	require.Empty(t, databasesOf(t, admin, next.Process.Pid), "the next run cleaned up after itself")
}

// childCommand runs this test binary's TestKillChild against the server.
func childCommand(ctx context.Context, serverURL, mode string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKillChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envKillChild+"="+mode, "TWICE_POSTGRES=dsn", "TWICE_DATABASE_URL="+serverURL, "TWICE_KEEP_DB=")
	return cmd
}

// adminURL is the URL of the maintenance database of db's server, with the
// password, for a child process.
func adminURL(db *pgfixture.DB) string {
	cfg := db.ConnConfig()
	u := url.URL{Scheme: "postgres", Path: "/postgres"}
	q := url.Values{"sslmode": {"disable"}}
	if strings.HasPrefix(cfg.Host, "/") { // a local cluster's socket directory
		q.Set("host", cfg.Host)
		q.Set("port", strconv.Itoa(int(cfg.Port)))
	} else {
		u.Host = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	}
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20") // pgx reads "+" as itself
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	} else {
		u.User = url.User(cfg.User)
	}
	return u.String()
}

// databasesOf lists the fixture databases (templates aside) that the process
// with this pid created, by the owner pgfixture writes in their comments.
func databasesOf(t *testing.T, admin *pgxpool.Pool, pid int) []string {
	t.Helper()
	rows, err := admin.Query(t.Context(), `SELECT datname FROM pg_database
		WHERE NOT datistemplate AND shobj_description(oid, 'pg_database') LIKE '%pid=' || $1 || ' %'
		ORDER BY datname`, strconv.Itoa(pid))
	require.NoError(t, err)
	var names []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		names = append(names, n)
	}
	require.NoError(t, rows.Err())
	return names
}
