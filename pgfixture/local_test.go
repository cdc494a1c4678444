package pgfixture

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/longtest"
	"github.com/twicekit/twicekit/internal/pgserver"
)

func needLocalBins(t *testing.T) {
	t.Helper()
	if _, err := pgserver.FindLocalBins(); err != nil {
		t.Skip(err)
	}
}

// postmasterPID reads the pid of the cluster's postmaster.
func postmasterPID(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	require.NoError(t, err)
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	return pid
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return !alive(pid)
}

func TestLocalClusterCloseLeavesNothing(t *testing.T) {
	t.Parallel()
	needLocalBins(t)
	ctx := ctxT(t)
	srv, err := startLocal(ctx)
	require.NoError(t, err)
	assert.Equal(t, "local", srv.Mode())
	dir := localDir(t, srv)
	pid := postmasterPID(t, dir)
	assert.True(t, strings.HasPrefix(filepath.Base(dir), pgserver.LocalDirPrefix))

	// Only loopback and the socket in the directory.
	assert.Equal(t, "127.0.0.1", scalar[string](t, srv.admin, "SHOW listen_addresses"))
	assert.Equal(t, dir, scalar[string](t, srv.admin, "SHOW unix_socket_directories"))
	assert.Equal(t, "off", scalar[string](t, srv.admin, "SHOW fsync"))
	assert.True(t, scalar[bool](t, srv.admin, "SELECT inet_client_addr() IS NULL"), "the fixture connects through the socket")
	if os.Geteuid() == 0 {
		assert.NotEqual(t, "0", procUID(t, pid), "PostgreSQL does not run as root")
	}

	db, err := srv.CreateDB(ctx, shopSchema)
	require.NoError(t, err)
	require.NoError(t, db.Reset(ctx))
	_, err = srv.CreateDB(ctx, shopSchema) // left for Close
	require.NoError(t, err)
	require.NoError(t, db.Close(ctx, false))
	require.NoError(t, srv.Close(ctx))
	require.NoError(t, srv.Close(ctx), "Close is idempotent")

	assert.True(t, waitGone(pid, 5*time.Second), "postgres %d still runs", pid)
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "the cluster directory %s is removed", dir)
	_, err = srv.CreateDB(ctx, shopSchema)
	assert.Error(t, err)
}

// TestALocalClusterUnderADirectoryWithASpaceAndAQuote: the URLs name the
// cluster's socket directory, under TMPDIR, which may hold any character.
func TestALocalClusterUnderADirectoryWithASpaceAndAQuote(t *testing.T) {
	needLocalBins(t)
	parent, err := os.MkdirTemp("", `twicekit sp'q-`)
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(parent) })
	require.NoError(t, os.Chmod(parent, 0o755)) // the postgres user's, as root
	t.Setenv("TMPDIR", parent)
	ctx := ctxT(t)
	srv, err := startLocal(ctx)
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Close(ctx)) }()
	assert.Equal(t, parent, filepath.Dir(localDir(t, srv)))
	db, err := srv.CreateDB(ctx, shopSchema)
	require.NoError(t, err, "a fixture database through the socket")
	assert.True(t, scalar[bool](t, db.Pool(), "SELECT inet_client_addr() IS NULL"))
	require.NoError(t, db.Close(ctx, false))
}

func TestLocalFixtureDatabasesDroppedOnClose(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := sharedT(t)
	if srv.Mode() == "dsn" {
		t.Skip("creates a role; only on servers pgfixture started")
	}
	other := dsnServer(t, srv, "twicekit_closer", "closer-pw", true)
	schema := SQL("CREATE TABLE closer_" + randHex(4) + " (id int)")
	a, err := other.CreateDB(ctx, schema)
	require.NoError(t, err)
	b, err := other.CreateDB(ctx, schema)
	require.NoError(t, err)
	require.NoError(t, other.Close(ctx))
	names := allDatabases(t, srv)
	assert.NotContains(t, names, a.Name())
	assert.NotContains(t, names, b.Name())
	assert.NotContains(t, names, templateName(schema.Hash()))
}

func procUID(t *testing.T, pid int) string {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Uid:"); ok {
			return strings.Fields(rest)[0]
		}
	}
	return ""
}

// localDir finds the cluster directory from the server's socket setting.
func localDir(t *testing.T, srv *Server) string {
	t.Helper()
	return scalar[string](t, srv.admin, "SHOW unix_socket_directories")
}

const childEnv = "PGFIXTURE_TEST_CHILD"

// TestLocalClusterDiesWithTheProcess runs a child test binary that starts a
// cluster and exits without closing it: the cluster must die with it (no
// TestMain cleanup), and the next start removes its directory.
func TestLocalClusterDiesWithTheProcess(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		srv, err := startLocal(context.Background())
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(2)
		}
		dir := localDir(t, srv)
		fmt.Printf("DIR %s %d\n", dir, postmasterPID(t, dir))
		os.Exit(0) // no Close
	}
	longtest.Skip(t, "starts a child test process with its own cluster")
	// Not parallel: another test's startLocal in this binary would remove
	// the stale directory before this test looks at it.
	needLocalBins(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLocalClusterDiesWithTheProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.Output()
	require.NoError(t, err, string(out))
	var dir string
	var pid int
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "DIR "); ok {
			_, err := fmt.Sscanf(rest, "%s %d", &dir, &pid)
			require.NoError(t, err)
		}
	}
	require.NotEmpty(t, dir, string(out))
	assert.True(t, waitGone(pid, 10*time.Second), "postgres %d outlived its test binary", pid)
	// Another test binary's local start (go test runs packages at once)
	// may have removed the stale directory already; else this one does.
	if _, err := os.Stat(dir); err == nil {
		pgserver.RemoveStaleClusterDirs()
	}
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "a stale cluster directory is removed on the next start")
}
