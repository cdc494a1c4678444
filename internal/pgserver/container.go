package pgserver

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
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	"github.com/testcontainers/testcontainers-go/modules/postgres"
)

// Container mode: a PostgreSQL container through testcontainers-go and its
// postgres module, on the engine testcontainers-go finds (DOCKER_HOST,
// Docker contexts, Podman and Colima sockets, TLS, its properties file).
const (
	// EnvImage names the image container mode runs.
	EnvImage = "TWICE_POSTGRES_IMAGE"

	// DefaultImage is an official postgres image; where no registry can be
	// reached, build a local one with `go run
	// github.com/twicekit/twicekit/pgfixture/cmd/twice-postgres-image` and
	// point TWICE_POSTGRES_IMAGE at it.
	DefaultImage = "postgres:15-alpine"

	// ImageCommand builds a local image from the host's PostgreSQL.
	ImageCommand = "go run github.com/twicekit/twicekit/pgfixture/cmd/twice-postgres-image"

	// Labels on every container pgfixture starts: the first marks them, the
	// others name the owning process so that a later run can remove the
	// containers of processes that died without cleaning up (where Ryuk,
	// testcontainers-go's reaper, does not run).
	LabelFixture  = "twicekit.fixture"
	LabelOwner    = "twicekit.owner"
	LabelOwnerPID = "twicekit.owner-pid"
	FixtureValue  = "pgfixture"

	// containerTmpfs is a tmpfs and containerPGData the cluster in it, so
	// that nothing is written to the storage driver (slow on fuse-overlayfs).
	containerTmpfs  = "/var/lib/twicekit"
	containerPGData = containerTmpfs + "/pgdata"

	containerPort = "5432/tcp"

	dockerPingTimeout = 3 * time.Second
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

// containerAuthScript runs once, when the container's cluster is made: it
// stores the superuser's password as md5, which the md5 lines of
// pg_hba.conf (POSTGRES_HOST_AUTH_METHOD=md5) then ask for.
//
// A SCRAM login costs the client 4096 rounds of PBKDF2. pgx computes them
// on every new connection, and a check opens fresh sessions for every
// scenario: under -race that was most of a test binary's CPU (a subset of
// twice's tests: 49 s with SCRAM, 31 s with md5, 24 s on a local server
// with no password). The port is still password-protected; the password
// is random and lives as long as the container.
//
// A PostgreSQL that no longer takes md5 passwords keeps the SCRAM one: the
// script swallows its error rather than stop the container's start, and
// pg_hba.conf's md5 lines accept a SCRAM password with SCRAM.
const containerAuthScript = `DO $twicekit$
BEGIN
	PERFORM set_config('password_encryption', 'md5', true);
	EXECUTE format('ALTER ROLE postgres PASSWORD %%L', '%s');
EXCEPTION WHEN OTHERS THEN
	RAISE WARNING 'twicekit: the password stays as it was: %%', SQLERRM;
END
$twicekit$;
`

// containerOptions are the settings of the container pgfixture runs, with
// the superuser's password.
func containerOptions(password string) []testcontainers.ContainerCustomizer {
	return []testcontainers.ContainerCustomizer{
		postgres.WithUsername("postgres"),
		postgres.WithPassword(password),
		postgres.WithDatabase("postgres"),
		testcontainers.WithEnv(map[string]string{
			"PGDATA":                    containerPGData,
			"POSTGRES_INITDB_ARGS":      "--no-sync",
			"POSTGRES_HOST_AUTH_METHOD": "md5",
		}),
		testcontainers.WithFiles(testcontainers.ContainerFile{
			Reader:            strings.NewReader(fmt.Sprintf(containerAuthScript, password)), // hex: nothing to quote
			ContainerFilePath: "/docker-entrypoint-initdb.d/00-twicekit-md5.sql",
			FileMode:          0o644,
		}),
		testcontainers.WithCmd(append([]string{"postgres"}, containerArgs...)...),
		testcontainers.WithTmpfs(map[string]string{containerTmpfs: "rw,mode=1777"}),
		testcontainers.WithLabels(map[string]string{
			LabelFixture:  FixtureValue,
			LabelOwner:    Self.String(),
			LabelOwnerPID: strconv.Itoa(os.Getpid()),
		}),
		testcontainers.WithLogger(silent{}),
	}
}

// Container starts a PostgreSQL container of the image TWICE_POSTGRES_IMAGE
// names, or of DefaultImage when it is unset.
// It returns the server's admin connection string, the function that
// removes the container, and notes for the server's provenance (how Ryuk
// was chosen, the containers of dead test processes it removed).
// scrub removes the container's password from an error's text.
func Container(ctx context.Context, scrub func(password string, err error) error) (dsn string, stop func(context.Context) error, notes []string, err error) {
	image := strings.TrimSpace(os.Getenv(EnvImage))
	if image == "" {
		image = DefaultImage
	}
	ryuk := chooseRyuk(ctx)
	// testcontainers-go prints a banner and every step to the standard
	// logger; a test's output keeps only pgfixture's own lines.
	quietTestcontainers()

	cctx, cancel := context.WithTimeout(ctx, dockerPingTimeout)
	cli, err := newDockerClient(cctx)
	cancel()
	if err != nil {
		return "", nil, nil, dockerUnreachableError(err)
	}
	defer cli.Close()
	removed := removeStaleContainersAt(ctx, cli.DaemonHost())

	password, err := randomHex(16)
	if err != nil {
		return "", nil, nil, err
	}
	fail := func(err error) error {
		return scrub(password, fmt.Errorf("container: starting %s: %w", image, err))
	}
	ctr, err := postgres.Run(ctx, image, containerOptions(password)...)
	if err != nil {
		if ctr != nil {
			detail := containerLogTail(ctx, ctr)
			_ = removeContainer(ctr)
			err = fmt.Errorf("%w%s", err, detail)
		}
		if !imagePresent(ctx, cli, image) {
			return "", nil, nil, imageUnavailableError(image, err)
		}
		return "", nil, nil, fail(ryuk.explain(err))
	}
	stop = containerStopper(ctr)
	wctx, cancel := context.WithTimeout(ctx, startupTimeout)
	defer cancel()
	dsn, err = waitForPostgres(wctx, ctr, password)
	if err != nil {
		detail := containerLogTail(ctx, ctr)
		_ = stop(context.Background())
		return "", nil, nil, fail(fmt.Errorf("%w%s", err, detail))
	}
	if ip, err := ctr.ContainerIP(wctx); err == nil && ip != "" {
		if direct, err := BridgeDSN(wctx, ip, password, dsn); err == nil {
			dsn = direct
		}
	}
	notes = append(notes, ryuk.note)
	if n := RemovedNote(removed); n != "" {
		notes = append(notes, n)
	}
	return dsn, stop, notes, nil
}

var quietOnce sync.Once

// quietTestcontainers silences testcontainers-go's default logger, once.
func quietTestcontainers() {
	quietOnce.Do(func() { tclog.SetDefault(silent{}) })
}

// silent is a testcontainers-go logger that prints nothing.
type silent struct{}

func (silent) Printf(string, ...any) {}

// waitForPostgres waits until PostgreSQL in the container answers a query
// over its published port, and returns the connection string that worked.
// The official image first runs a temporary server on the unix socket only,
// then restarts: a query over TCP means the real server is up.
// It fails early when the container stops.
func waitForPostgres(ctx context.Context, ctr testcontainers.Container, password string) (string, error) {
	var lastErr error
	for {
		state, err := ctr.State(ctx)
		if err != nil {
			return "", fmt.Errorf("container state: %w", err)
		}
		if !state.Running {
			return "", fmt.Errorf("the container stopped (status %s, exit code %d) before PostgreSQL accepted connections", state.Status, state.ExitCode)
		}
		hosts := postgresHosts(ctx, ctr)
		if port, err := ctr.MappedPort(ctx, containerPort); err != nil {
			lastErr = err
		} else if n, err := portNumber(port); err != nil {
			lastErr = err
		} else if dsn, err := firstAnswering(ctx, password, hosts, n); err == nil {
			return dsn, nil
		} else {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("PostgreSQL did not accept connections on %v: %w (last error: %v)", hosts, ctx.Err(), lastErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// portNumber is the number of a port testcontainers-go mapped: its text
// is "55001/tcp" in every release pgfixture supports (a nat.Port before
// testcontainers-go v0.42.0, a network.Port from it on).
func portNumber(port any) (uint16, error) {
	text := fmt.Sprint(port)
	num, _, _ := strings.Cut(text, "/")
	n, err := strconv.ParseUint(num, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("container: testcontainers-go mapped PostgreSQL's port to %q, not a port number", text)
	}
	return uint16(n), nil
}

// BridgeDSN is the connection string of the container's own address (ip)
// on its network, port 5432, when this process reaches it (an engine on this
// Linux machine) and the server there is the one behind published (the
// same system identifier: another PostgreSQL may answer at that address,
// for example a CI service beside a Docker-in-Docker engine). It skips the
// engine's port-forwarding proxy, which every packet of the published port
// crosses: a twice test under -race ran 14% faster without it (26.5 s
// against 30.8 s). Elsewhere (Docker Desktop, a remote or rootless engine)
// the address does not answer within bridgeTimeout and the published port
// stays.
func BridgeDSN(ctx context.Context, ip, password, published string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, bridgeTimeout)
	defer cancel()
	dsn := fmt.Sprintf("postgres://postgres:%s@%s/postgres?sslmode=disable", password, joinHostPort(ip, 5432))
	want, err := systemIdentifier(ctx, published)
	if err != nil {
		return "", err
	}
	got, err := systemIdentifier(ctx, dsn)
	if err != nil {
		return "", err
	}
	if got != want {
		return "", fmt.Errorf("%s is another server (system identifier %d, the container's is %d)", ip, got, want)
	}
	return dsn, nil
}

// bridgeTimeout bounds the look at the container's own address: a few
// milliseconds where it answers, a blackhole elsewhere.
const bridgeTimeout = 500 * time.Millisecond

// systemIdentifier is the system identifier of the cluster dsn reaches,
// which initdb chose at random.
func systemIdentifier(ctx context.Context, dsn string) (uint64, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return 0, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var id int64
	err = conn.QueryRow(ctx, `SELECT system_identifier FROM pg_control_system()`).Scan(&id)
	return uint64(id), err
}

// postgresHosts lists where the published port may be reached, in the
// order they are tried: loopback (right when the engine runs on this
// machine, or in this same container as in this project's CI), then the
// host testcontainers-go names (a remote engine's host, or the gateway
// when this process runs in a container).
func postgresHosts(ctx context.Context, ctr testcontainers.Container) [][]string {
	hosts := [][]string{{"127.0.0.1", "::1"}}
	if h, err := ctr.Host(ctx); err == nil && !slices.Contains(hosts[0], h) && h != "localhost" {
		hosts = append(hosts, []string{h})
	}
	return hosts
}

// firstAnswering tries each group of hosts in turn, the hosts of a group
// at once (a wrong host may blackhole, so they are not tried one by one),
// and returns the connection string of the first that answers a query.
func firstAnswering(ctx context.Context, password string, groups [][]string, port uint16) (string, error) {
	var errs []error
	for _, hosts := range groups {
		dsn, err := firstOf(ctx, password, hosts, port)
		if err == nil {
			return dsn, nil
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

func firstOf(ctx context.Context, password string, hosts []string, port uint16) (string, error) {
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
	return fmt.Errorf("container: image %s is not available and cannot be pulled: build one from this machine's PostgreSQL with `%s` and set %s to the name it prints, or set %s to an image the engine has (pull: %s)",
		image, ImageCommand, EnvImage, EnvImage, oneLine(pullErr.Error()))
}

// newDockerClient is testcontainers-go's client of the engine it finds.
// Before its v0.42.0, testcontainers-go panics when it finds none: the
// panic is that error.
func newDockerClient(ctx context.Context) (cli *testcontainers.DockerClient, err error) {
	defer func() {
		if r := recover(); r != nil {
			cli, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return testcontainers.NewDockerClientWithOpts(ctx)
}

// dockerUnreachableError is the error of an engine that does not answer.
func dockerUnreachableError(err error) error {
	return fmt.Errorf("container: Docker is not reachable (%s); start Docker, or point DOCKER_HOST or testcontainers-go's settings (~/.testcontainers.properties) at it", oneLine(err.Error()))
}

// imagePresent says whether the engine has image.
func imagePresent(ctx context.Context, cli *testcontainers.DockerClient, image string) bool {
	ictx, cancel := context.WithTimeout(ctx, dockerPingTimeout)
	defer cancel()
	_, err := cli.ImageInspect(ictx, image)
	return err == nil
}

// containerStopper returns the stop function of a Server in container mode.
// It removes the container with its volumes, once.
// A container already gone counts as removed.
func containerStopper(ctr testcontainers.Container) func(context.Context) error {
	var once sync.Once
	var stopErr error
	return func(context.Context) error {
		once.Do(func() { stopErr = removeContainer(ctr) })
		return stopErr
	}
}

// removeContainer removes ctr and its volumes; the caller's context may be
// done, removing must not be.
func removeContainer(ctr testcontainers.Container) error {
	rctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	if err := ctr.Terminate(rctx, testcontainers.StopTimeout(0), testcontainers.RemoveVolumes()); err != nil {
		return fmt.Errorf("container: removing %.12s: %w", ctr.GetContainerID(), err)
	}
	return nil
}

// containerLogTail returns the end of the container's output, for errors.
func containerLogTail(ctx context.Context, ctr testcontainers.Container) string {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	r, err := ctr.Logs(lctx)
	if err != nil {
		return ""
	}
	defer r.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for b.Len() < 1<<20 {
		n, err := r.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "\ncontainer log:\n" + tail([]byte(b.String()), 2000)
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("container: generating a password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func joinHostPort(host string, port uint16) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
