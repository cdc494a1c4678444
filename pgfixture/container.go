package pgfixture

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/jackc/pgx/v5"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Container mode: a PostgreSQL container through the testcontainers-go
// postgres module.
const (
	envImage = "TWICE_POSTGRES_IMAGE"

	// defaultImage is an official postgres image; where no registry can be
	// reached, build a local one with .ci/postgres-image/build.sh and point
	// TWICE_POSTGRES_IMAGE at it.
	defaultImage = "postgres:15-alpine"

	// ryukImage is the reaper image of testcontainers-go v0.45.0
	// (internal/config.ReaperDefaultImage). When it is not present and cannot
	// be pulled, Ryuk is disabled and pgfixture removes its containers itself.
	ryukImage       = "testcontainers/ryuk:0.14.0"
	envRyukDisabled = "TESTCONTAINERS_RYUK_DISABLED"

	// Labels on every container pgfixture starts: the first marks them, the
	// others name the owning process so that a later run can remove the
	// containers of processes that died without cleaning up.
	labelFixture  = "twicekit.fixture"
	labelOwner    = "twicekit.owner"
	labelOwnerPID = "twicekit.owner-pid"
	fixtureValue  = "pgfixture"

	// containerPGData is where the container keeps its cluster: a tmpfs, so
	// that nothing is written to the storage driver (slow on fuse-overlayfs).
	containerTmpfs  = "/var/lib/twicekit"
	containerPGData = containerTmpfs + "/pgdata"

	dockerPingTimeout = 3 * time.Second
	pullTimeout       = 10 * time.Minute
	startupTimeout    = 2 * time.Minute
)

// containerArgs tune the server for tests: nothing survives the container,
// so durability is off.
var containerArgs = []string{
	"-c", "fsync=off",
	"-c", "synchronous_commit=off",
	"-c", "full_page_writes=off",
	"-c", "max_connections=200",
	"-c", "shared_buffers=64MB",
	"-c", "jit=off",
	"-c", "timezone=UTC",
}

// startContainer starts a PostgreSQL container and returns a Server on it
// whose stop function terminates the container.
func startContainer(ctx context.Context) (srv *Server, err error) {
	// testcontainers-go panics in some paths (no Docker host found, ...):
	// turn a panic into an error, never a crashed test binary.
	defer func() {
		if r := recover(); r != nil {
			srv, err = nil, fmt.Errorf("container: testcontainers-go panicked: %v", r)
		}
	}()
	image := strings.TrimSpace(os.Getenv(envImage))
	if image == "" {
		image = defaultImage
	}

	cli, err := dockerClient(ctx)
	if err != nil {
		return nil, err
	}
	defer cli.Close()

	removeStaleContainers(ctx, cli)

	if err := ensureImage(ctx, cli, image); err != nil {
		return nil, err
	}
	// Ryuk reaps containers when the test binary dies, but only where its own
	// image is present or can be pulled; elsewhere (no registry) Main and
	// Server.Close terminate the container, and the labels let the next run
	// remove what a killed process left.
	if os.Getenv(envRyukDisabled) == "" {
		if err := ensureImage(ctx, cli, ryukImage); err != nil {
			os.Setenv(envRyukDisabled, "true")
		}
	}

	password, err := randomHex(16)
	if err != nil {
		return nil, err
	}
	logs := &tailLogger{}
	ready := &pgReady{password: password}
	ctr, err := tcpostgres.Run(ctx, image,
		testcontainers.WithLogger(logs),
		tcpostgres.WithUsername("postgres"),
		tcpostgres.WithPassword(password),
		tcpostgres.WithDatabase("postgres"),
		testcontainers.WithEnv(map[string]string{
			"PGDATA":               containerPGData,
			"POSTGRES_INITDB_ARGS": "--no-sync",
		}),
		testcontainers.WithTmpfs(map[string]string{containerTmpfs: "rw,mode=1777"}),
		testcontainers.WithCmdArgs(containerArgs...),
		testcontainers.WithLabels(map[string]string{
			labelFixture:  fixtureValue,
			labelOwner:    self.String(),
			labelOwnerPID: strconv.Itoa(os.Getpid()),
		}),
		// The official image initialises with a temporary server that listens
		// on the unix socket only, then restarts: a successful query over the
		// mapped TCP port means the real server is up, however many restarts.
		testcontainers.WithWaitStrategyAndDeadline(startupTimeout, ready),
	)
	if ctr == nil && err != nil {
		return nil, scrubPassword(password, fmt.Errorf("container: starting %s: %w%s", image, err, logs.tail()))
	}
	stop := containerStopper(ctr)
	if err != nil {
		detail := containerLogTail(ctx, ctr)
		_ = stop(context.Background())
		return nil, scrubPassword(password, fmt.Errorf("container: starting %s: %w%s%s", image, err, detail, logs.tail()))
	}
	return newServerFromDSN(ctx, "container", ready.dsn, stop)
}

// pgReady waits until PostgreSQL in the container answers a query over its
// mapped TCP port, and records the connection string that worked.
//
// The host is not simply testcontainers-go's Host(): inside a container
// (a /.dockerenv file) it answers the default gateway, which is wrong when
// the Docker engine runs in that same container (this project's CI). So
// every plausible host is tried: Host(), the DOCKER_HOST tcp host, loopback.
type pgReady struct {
	password string
	dsn      string // set once ready
}

var _ wait.Strategy = (*pgReady)(nil)

func (w *pgReady) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	var hosts []string
	add := func(h string) {
		if h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	if h, err := target.Host(ctx); err == nil {
		add(h)
	}
	if u, err := url.Parse(os.Getenv("DOCKER_HOST")); err == nil && u.Scheme == "tcp" {
		add(u.Hostname())
	}
	add("127.0.0.1")
	add("::1")

	var lastErr error
	for {
		state, err := target.State(ctx)
		if err != nil {
			return fmt.Errorf("container state: %w", err)
		}
		if !state.Running {
			return fmt.Errorf("the container stopped (status %s, exit code %d) before PostgreSQL accepted connections", state.Status, state.ExitCode)
		}
		if port, err := target.MappedPort(ctx, "5432/tcp"); err != nil {
			lastErr = err
		} else {
			// All hosts at once, the first that answers wins: a wrong one
			// may blackhole (time out).
			if dsn, err := firstAnswering(ctx, w.password, hosts, port.Num()); err == nil {
				w.dsn = dsn
				return nil
			} else {
				lastErr = err
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("PostgreSQL did not accept connections on %s: %w (last error: %v)", strings.Join(hosts, ", "), ctx.Err(), lastErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func firstAnswering(ctx context.Context, password string, hosts []string, port uint16) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		dsn string
		err error
	}
	results := make(chan result, len(hosts))
	for _, h := range hosts {
		dsn := fmt.Sprintf("postgres://postgres:%s@%s/postgres?sslmode=disable", password, joinHostPort(h, port))
		go func() { results <- result{dsn, pingDSN(ctx, dsn)} }()
	}
	var errs []error
	for range hosts {
		r := <-results
		if r.err == nil {
			return r.dsn, nil
		}
		errs = append(errs, r.err)
	}
	return "", errors.Join(errs...)
}

func pingDSN(ctx context.Context, dsn string) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return err
	}
	cfg.ConnectTimeout = time.Second
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, "SELECT 1")
	return err
}

// dockerClient connects to the Docker engine (DOCKER_HOST or the default
// socket) and checks within a few seconds that it answers. It is used for
// everything that must happen before testcontainers-go reads its
// configuration once per process (the Ryuk decision).
func dockerClient(ctx context.Context) (*client.Client, error) {
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		host = client.DefaultDockerHost
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, fmt.Errorf("container: Docker client for %s: %w", host, err)
	}
	pctx, cancel := context.WithTimeout(ctx, dockerPingTimeout)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, fmt.Errorf("container: Docker is not reachable at %s (%s); start Docker or set DOCKER_HOST", host, oneLine(err.Error()))
	}
	return cli, nil
}

// ensureImage returns nil when image is present, else tries to pull it once
// (no retries: where no registry answers this fails in milliseconds).
func ensureImage(ctx context.Context, cli *client.Client, image string) error {
	if _, err := cli.ImageInspect(ctx, image); err == nil {
		return nil
	} else if !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("container: inspecting image %s: %w", image, err)
	}
	pctx, cancel := context.WithTimeout(ctx, pullTimeout)
	defer cancel()
	pullErr := func() error {
		resp, err := cli.ImagePull(pctx, image, client.ImagePullOptions{})
		if err != nil {
			return err
		}
		return resp.Wait(pctx)
	}()
	if pullErr == nil {
		if _, err := cli.ImageInspect(ctx, image); err == nil {
			return nil
		}
		pullErr = errors.New("the pull succeeded but the image is still not there")
	}
	return fmt.Errorf("container: image %s is not available and cannot be pulled: build one with .ci/postgres-image/build.sh or set %s (pull: %s)",
		image, envImage, oneLine(pullErr.Error()))
}

// containerStopper returns the stop function of a Server in container mode:
// it terminates (kills and removes, with volumes) the container, once.
func containerStopper(ctr *tcpostgres.PostgresContainer) func(context.Context) error {
	var once sync.Once
	var stopErr error
	return func(ctx context.Context) error {
		once.Do(func() {
			// Nothing in the container needs to survive: kill at once.
			stopErr = ctr.Terminate(ctx, testcontainers.StopTimeout(0))
			if stopErr == nil {
				return
			}
			// Retry with a client of our own if testcontainers failed.
			cli, err := dockerClient(ctx)
			if err != nil {
				return
			}
			defer cli.Close()
			_, err = cli.ContainerRemove(ctx, ctr.GetContainerID(), client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			if err == nil || cerrdefs.IsNotFound(err) {
				stopErr = nil
			}
		})
		return stopErr
	}
}

// removeStaleContainers removes pgfixture containers whose owner process
// is dead (killed before it could stop its container). Best effort.
func removeStaleContainers(ctx context.Context, cli *client.Client) {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := cli.ContainerList(lctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", labelFixture+"="+fixtureValue),
	})
	if err != nil {
		return
	}
	for _, c := range res.Items {
		o, ok := parseOwner(c.Labels[labelOwner])
		if !ok || !o.dead() {
			continue
		}
		_, _ = cli.ContainerRemove(lctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	}
}

// containerLogTail returns the end of the container's output, for errors.
func containerLogTail(ctx context.Context, ctr *tcpostgres.PostgresContainer) string {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rc, err := ctr.Logs(lctx)
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 1<<20))
	if len(b) == 0 {
		return ""
	}
	return "\ncontainer log:\n" + tail(b, 2000)
}

func scrubPassword(password string, err error) error {
	return newScrubber(password).Error(err)
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("container: generating a password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// tailLogger keeps the last lines testcontainers-go logs, shown only when
// starting the container fails (tests stay quiet otherwise).
type tailLogger struct {
	mu    sync.Mutex
	lines []string
}

var _ tclog.Logger = (*tailLogger)(nil)

func (l *tailLogger) Printf(format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimRight(fmt.Sprintf(format, v...), "\n"))
	if len(l.lines) > 20 {
		l.lines = l.lines[len(l.lines)-20:]
	}
}

func (l *tailLogger) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) == 0 {
		return ""
	}
	return "\ntestcontainers log:\n  " + strings.Join(l.lines, "\n  ")
}

// reapContainers removes the containers of dead pgfixture processes in any
// mode, so that a killed test binary's container goes with the next run of
// any test binary, not only of the next one in container mode. It only asks
// a Docker engine on a local socket, and gives up within a second.
func reapContainers(ctx context.Context) {
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		host = client.DefaultDockerHost
	}
	path, ok := strings.CutPrefix(host, "unix://")
	if !ok {
		return
	}
	if _, err := os.Stat(path); err != nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return
	}
	defer cli.Close()
	if _, err := cli.Ping(rctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return
	}
	removeStaleContainers(rctx, cli)
}
