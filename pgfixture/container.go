package pgfixture

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Container mode: a PostgreSQL container, through the Docker Engine API
// (docker.go).
const (
	envImage = "TWICE_POSTGRES_IMAGE"

	// defaultImage is an official postgres image; where no registry can be
	// reached, build a local one with .ci/postgres-image/build.sh and point
	// TWICE_POSTGRES_IMAGE at it.
	defaultImage = "postgres:15-alpine"

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

	containerPort = "5432/tcp"

	dockerPingTimeout = 3 * time.Second
	pullTimeout       = 10 * time.Minute
	startupTimeout    = 2 * time.Minute
	removeTimeout     = 30 * time.Second
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

// containerSpecFor is the container pgfixture creates from image, with the
// superuser's password.
func containerSpecFor(image, password string) containerSpec {
	return containerSpec{
		Image: image,
		Env: []string{
			"POSTGRES_USER=postgres",
			"POSTGRES_PASSWORD=" + password,
			"POSTGRES_DB=postgres",
			"PGDATA=" + containerPGData,
			"POSTGRES_INITDB_ARGS=--no-sync",
		},
		Cmd: append([]string{"postgres"}, containerArgs...),
		Labels: map[string]string{
			labelFixture:  fixtureValue,
			labelOwner:    self.String(),
			labelOwnerPID: strconv.Itoa(os.Getpid()),
		},
		ExposedPorts: map[string]struct{}{containerPort: {}},
		HostConfig: containerHostConfig{
			// An empty HostPort publishes on a random free port.
			PortBindings: map[string][]portBinding{containerPort: {{}}},
			Tmpfs:        map[string]string{containerTmpfs: "rw,mode=1777"},
		},
	}
}

// startContainer starts a PostgreSQL container and returns a Server on it
// whose stop function removes the container.
func startContainer(ctx context.Context) (*Server, error) {
	image := strings.TrimSpace(os.Getenv(envImage))
	if image == "" {
		image = defaultImage
	}

	cli, err := connectDocker(ctx, dockerPingTimeout)
	if err != nil {
		return nil, err
	}
	defer cli.close()

	removeStaleContainers(ctx, cli)

	if err := ensureImage(ctx, cli, image); err != nil {
		return nil, err
	}

	password, err := randomHex(16)
	if err != nil {
		return nil, err
	}
	fail := func(err error) error {
		return scrubPassword(password, fmt.Errorf("container: starting %s: %w", image, err))
	}
	id, err := cli.containerCreate(ctx, containerSpecFor(image, password))
	if err != nil {
		return nil, fail(err)
	}
	stop := containerStopper(id)
	if err := cli.containerStart(ctx, id); err != nil {
		detail := containerLogTail(ctx, cli, id)
		_ = stop(context.Background())
		return nil, fail(fmt.Errorf("%w%s", err, detail))
	}
	wctx, cancel := context.WithTimeout(ctx, startupTimeout)
	defer cancel()
	dsn, err := waitForPostgres(wctx, cli, id, password)
	if err != nil {
		detail := containerLogTail(ctx, cli, id)
		_ = stop(context.Background())
		return nil, fail(fmt.Errorf("%w%s", err, detail))
	}
	return newServerFromDSN(ctx, "container", dsn, stop)
}

// waitForPostgres waits until PostgreSQL in container id answers a query
// over its published port, and returns the connection string that worked.
// The official image first runs a temporary server on the unix socket only,
// then restarts: a query over TCP means the real server is up.
// It fails early when the container stops.
func waitForPostgres(ctx context.Context, cli *dockerAPI, id, password string) (string, error) {
	hosts := postgresHosts(ctx, cli, cli.endpoint, inAContainer())
	var lastErr error
	for {
		state, err := cli.containerInspect(ctx, id)
		if err != nil {
			return "", fmt.Errorf("container state: %w", err)
		}
		if !state.State.Running {
			return "", fmt.Errorf("the container stopped (status %s, exit code %d) before PostgreSQL accepted connections", state.State.Status, state.State.ExitCode)
		}
		if port, err := state.hostPort(containerPort); err != nil {
			lastErr = err
		} else if dsn, err := firstAnswering(ctx, password, hosts, port); err == nil {
			return dsn, nil
		} else {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("PostgreSQL did not accept connections on %s: %w (last error: %v)", strings.Join(hosts, ", "), ctx.Err(), lastErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// postgresHosts lists where the published port may be reached, most likely
// first: the host of a tcp:// DOCKER_HOST, the bridge network's gateway when
// this process runs in a container, loopback.
// Inside a container, loopback is right when the engine runs in that same
// container (this project's CI), and the gateway is right when the engine
// runs on the host.
func postgresHosts(ctx context.Context, cli *dockerAPI, e dockerEndpoint, inContainer bool) []string {
	var hosts []string
	add := func(h string) {
		if h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	if e.network == "tcp" {
		if h, _, err := net.SplitHostPort(e.address); err == nil {
			add(h)
		}
	}
	if inContainer && cli != nil {
		if gw, err := cli.bridgeGateway(ctx); err == nil {
			add(gw)
		}
	}
	add("127.0.0.1")
	add("::1")
	return hosts
}

// inAContainer says whether this process runs in a Docker container.
func inAContainer() bool {
	_, err := os.Stat("/.dockerenv")
	return err == nil
}

// firstAnswering tries every host at once and returns the connection string
// of the first that answers a query.
// A wrong host may blackhole (time out), so they are not tried in turn.
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

// imageUnavailableError says that image can be neither found nor pulled,
// and how to provide one.
func imageUnavailableError(image string, pullErr error) error {
	return fmt.Errorf("container: image %s is not available and cannot be pulled: build one with .ci/postgres-image/build.sh or set %s (pull: %s)",
		image, envImage, oneLine(pullErr.Error()))
}

// ensureImage returns nil when image is present, else tries to pull it once.
// There are no retries: where no registry answers, this fails in
// milliseconds.
func ensureImage(ctx context.Context, cli *dockerAPI, image string) error {
	if ok, err := cli.imageExists(ctx, image); err != nil {
		return fmt.Errorf("container: inspecting image %s: %w", image, err)
	} else if ok {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, pullTimeout)
	defer cancel()
	pullErr := cli.imagePull(pctx, image)
	if pullErr == nil {
		if ok, _ := cli.imageExists(ctx, image); ok {
			return nil
		}
		pullErr = errors.New("the pull succeeded but the image is still not there")
	}
	return imageUnavailableError(image, pullErr)
}

// containerStopper returns the stop function of a Server in container mode.
// It kills and removes the container with its volumes, once.
// A container already gone counts as removed.
func containerStopper(id string) func(context.Context) error {
	var once sync.Once
	var stopErr error
	return func(ctx context.Context) error {
		once.Do(func() {
			// The server's context may be done; removing must not be.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
			defer cancel()
			cli, err := connectDocker(rctx, dockerPingTimeout)
			if err != nil {
				stopErr = fmt.Errorf("container: removing %.12s: %w", id, err)
				return
			}
			defer cli.close()
			if err := cli.containerRemove(rctx, id); err != nil && !isNotFound(err) {
				stopErr = fmt.Errorf("container: removing %.12s: %w", id, err)
			}
		})
		return stopErr
	}
}

// removeStaleContainers removes pgfixture containers whose owner process
// is dead (killed before it could stop its container).
// It is best effort.
func removeStaleContainers(ctx context.Context, cli *dockerAPI) {
	lctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	list, err := cli.containerList(lctx, labelFixture+"="+fixtureValue)
	if err != nil {
		return
	}
	for _, c := range list {
		o, ok := parseOwner(c.Labels[labelOwner])
		if !ok || !o.dead() {
			continue
		}
		_ = cli.containerRemove(lctx, c.ID)
	}
}

// containerLogTail returns the end of the container's output, for errors.
func containerLogTail(ctx context.Context, cli *dockerAPI, id string) string {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	b, _ := cli.containerLogs(lctx, id, 200)
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

// reapContainers removes the containers of dead pgfixture processes in any
// mode, so that a killed test binary's container goes with the next run of
// any test binary, not only of the next one in container mode.
// It only asks a Docker engine on a local socket, and gives up within a
// second.
func reapContainers(ctx context.Context) {
	e, err := dockerEndpointFromEnv()
	if err != nil || e.network != "unix" {
		return
	}
	if _, err := os.Stat(e.address); err != nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	cli, err := connectDocker(rctx, time.Second)
	if err != nil {
		return
	}
	defer cli.close()
	removeStaleContainers(rctx, cli)
}
