package pgserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// LocalDirPrefix starts the name of every throwaway cluster directory.
const LocalDirPrefix = "twicekit-pg-"

// localBinGlob is where Debian-like systems install PostgreSQL versions.
var localBinGlob = "/usr/lib/postgresql/*/bin"

// FindLocalBins returns the directory holding initdb and postgres: PATH
// first, then the highest version under /usr/lib/postgresql.
func FindLocalBins() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
		if q, err := exec.LookPath("postgres"); err == nil {
			_ = q
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob(localBinGlob)
	sort.Slice(dirs, func(i, j int) bool { return pgVersionOf(dirs[i]) > pgVersionOf(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("no initdb/postgres on PATH or under /usr/lib/postgresql/*/bin (install them: apt-get install postgresql)")
}

func pgVersionOf(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func binPath(dir, name string) string {
	p := filepath.Join(dir, name)
	if isExec(p) {
		return p
	}
	if q, err := exec.LookPath(name); err == nil {
		return q
	}
	return p
}

// localCluster is a throwaway cluster started by this process.
type localCluster struct {
	dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the postgres process has exited
	log  *os.File

	stopOnce sync.Once
	stopErr  error
}

// Local initialises and starts a throwaway cluster from the installed
// binaries, with extra postgres settings ("name=value") that win over
// the defaults (startCluster's).
// It returns the cluster's admin connection string and the function that
// stops it and removes its directory.
// It first removes the directories of clusters whose processes died.
func Local(ctx context.Context, settings []string) (dsn string, stop func(context.Context) error, err error) {
	bins, err := FindLocalBins()
	if err != nil {
		return "", nil, err
	}
	RemoveStaleClusterDirs()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		c, dsn, err := startCluster(ctx, bins, settings)
		if err != nil {
			lastErr = err
			if ctx.Err() != nil || !errors.Is(err, errPortTaken) {
				return "", nil, err
			}
			continue
		}
		return dsn, c.stop, nil
	}
	return "", nil, lastErr
}

var errPortTaken = errors.New("port taken")

// runAs returns the credential to run PostgreSQL with: none unless the
// process is root, then the postgres system user, else nobody.
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, errors.New("running as root and neither a postgres nor a nobody user exists to run PostgreSQL as (PostgreSQL refuses to run as root); create one (useradd -r postgres) or run the tests as another user")
}

func startCluster(ctx context.Context, bins string, settings []string) (_ *localCluster, dsn string, err error) {
	cred, err := runAs()
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp(clusterParent(), LocalDirPrefix)
	if err != nil {
		return nil, "", fmt.Errorf("creating the cluster directory: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(Self.String()+"\n"), 0o644); err != nil {
		return nil, "", err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, "", fmt.Errorf("handing %s to uid %d: %w", dir, cred.Uid, err)
		}
	}
	data := filepath.Join(dir, "data")
	env := append(os.Environ(), "LC_ALL=C", "LANG=C", "TZ=UTC")
	if err := initData(ctx, bins, dir, data, cred, env); err != nil {
		return nil, "", err
	}

	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	logf, err := os.OpenFile(filepath.Join(dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, "", err
	}
	args := []string{
		"-D", data,
		"-p", strconv.Itoa(port),
		"-k", dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=200",
		"-c", "shared_buffers=64MB",
		"-c", "unix_socket_permissions=0700",
		"-c", "log_min_messages=warning",
		"-c", "timezone=UTC",
	}
	for _, kv := range settings {
		args = append(args, "-c", kv) // later settings win
	}
	cmd := exec.Command(binPath(bins, "postgres"), args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = logf
	cmd.Stderr = logf
	// Pdeathsig: the cluster dies with this process even when nobody calls
	// Close (no TestMain, a panic, a timeout).
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, "", fmt.Errorf("starting postgres: %w", err)
	}
	c := &localCluster{dir: dir, cmd: cmd, done: make(chan struct{}), log: logf}
	go func() {
		_ = cmd.Wait()
		close(c.done)
	}()
	// Clients connect through the Unix socket in dir (the server listens
	// on 127.0.0.1 too): a scenario costs about 7 % less CPU than over
	// loopback TCP, most of it the kernel's (BENCHMARKS.md).
	dsn = fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable", quoteValue(dir), port)
	if err := c.waitReady(ctx, dsn); err != nil {
		_ = c.stop(context.Background())
		return nil, "", err
	}
	return c, dsn, nil
}

// quoteValue quotes v for a keyword/value connection string (a TMPDIR may
// hold spaces or quotes).
func quoteValue(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

func (c *localCluster) waitReady(ctx context.Context, dsn string) error {
	deadline := time.Now().Add(60 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-c.done:
			log := c.readLog()
			if strings.Contains(log, "could not bind") || strings.Contains(log, "Address already in use") {
				return errPortTaken
			}
			return fmt.Errorf("postgres exited while starting: %s", tail([]byte(log), 800))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(cctx, dsn)
		cancel()
		if err == nil {
			_ = conn.Close(context.Background())
			return nil
		}
		lastErr = err
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("postgres did not accept connections within 60s: %v; log: %s", lastErr, tail([]byte(c.readLog()), 800))
}

func (c *localCluster) readLog() string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
	return string(b)
}

// stop shuts the cluster down and removes its directory. The directory is
// thrown away, so there is nothing to checkpoint: immediate shutdown
// (SIGQUIT) first, then kill.
func (c *localCluster) stop(ctx context.Context) error {
	c.stopOnce.Do(func() {
		_ = c.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		case <-ctx.Done():
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		c.log.Close()
		c.stopErr = os.RemoveAll(c.dir)
	})
	return c.stopErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = append([]byte("..."), b[len(b)-n:]...)
	}
	return string(b)
}

// RemoveStaleClusterDirs removes twicekit-pg-* directories whose owner
// process is dead and whose postmaster no longer runs.
func RemoveStaleClusterDirs() {
	var dirs []string
	for _, parent := range clusterParents() {
		found, _ := filepath.Glob(filepath.Join(parent, LocalDirPrefix+"*"))
		dirs = append(dirs, found...)
	}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner"))
		if err != nil {
			continue
		}
		o, ok := ParseOwner(strings.TrimSpace(string(b)))
		if !ok || !o.Dead() {
			continue
		}
		if pm, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			line, _, _ := strings.Cut(string(pm), "\n")
			if pid, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && pid > 0 {
				if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
					continue // still running
				}
			}
		}
		_ = os.RemoveAll(d)
	}
}
