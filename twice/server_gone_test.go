package twice_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// TestTheServerGoingAwayIsTheCheckError: the PostgreSQL server shuts down
// in the middle of a check (a fast shutdown: every session ends with 57P01,
// then the server is gone). The check says so in its own words, never
// "internal error", finds nothing about the job, and keeps no database.
// The same job on a server that stays up passes.
func TestTheServerGoingAwayIsTheCheckError(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("initdb"); err != nil {
		if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) == 0 {
			t.Skip("no PostgreSQL binaries (initdb) to start a server of the test's own")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := pgfixture.StartLocal(ctx)
	require.NoError(t, err)
	defer func() { _ = srv.Close(context.Background()) }() // the server is gone: dropping its databases fails

	var calls atomic.Int32
	job := loyaltyJob("ledger CTE", func(ctx context.Context, a *twice.Attempt) error {
		if calls.Add(1) == 3 { // a scenario's attempt: the server shuts down under it
			var dir string
			if err := a.Pool.QueryRow(ctx, `SHOW data_directory`).Scan(&dir); err != nil {
				return err
			}
			pidFile, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
			if err != nil {
				return err
			}
			pid, err := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
			if err != nil {
				return err
			}
			if err := syscall.Kill(pid, syscall.SIGINT); err != nil { // fast shutdown
				return err
			}
			for syscall.Kill(pid, 0) == nil {
				time.Sleep(10 * time.Millisecond)
			}
		}
		return ledgerCTE(ctx, a)
	})
	rep := twice.Check(ctx, job, twice.OnServer(srv), twice.KeepFailedDatabase(), twice.WithoutConcurrency("one server, one scenario at a time"))
	require.Error(t, rep.Err, rep.String())
	require.Empty(t, rep.Findings)
	require.Empty(t, rep.KeptDatabase)
	msg := rep.Err.Error()
	require.True(t, strings.HasPrefix(msg, "twice: the PostgreSQL server went away during the check ("), msg)
	require.NotContains(t, msg, "internal error")
	require.Contains(t, msg, "keep the server up for the whole test")

	// The fixed twin of the situation: the same job where the server stays.
	fine := loyaltyJob("ledger CTE", ledgerCTE)
	rep = twice.Check(context.Background(), fine, twice.WithoutConcurrency("as above"))
	require.True(t, rep.OK(), rep.String())
}
