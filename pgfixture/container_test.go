package pgfixture

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/jackc/pgx/v5"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/twicekit/twicekit/internal/pgserver"
)

// needDocker returns a client of the Docker engine, or skips the test when
// none answers.
func needDocker(t *testing.T) *client.Client {
	t.Helper()
	cli, err := pgserver.LocalEngine(context.Background())
	if err != nil {
		t.Skipf("container mode not testable here: %v", err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// needImage skips the test unless Docker answers and TWICE_POSTGRES_IMAGE
// names an image present on it (nothing is pulled by the tests).
func needImage(t *testing.T) *client.Client {
	t.Helper()
	cli := needDocker(t)
	image := os.Getenv(pgserver.EnvImage)
	if image == "" {
		t.Skipf("container mode not testable here: %s is not set (build a local image with `%s` and export %s=<its name>)", pgserver.EnvImage, pgserver.ImageCommand, pgserver.EnvImage)
	}
	if _, err := cli.ImageInspect(context.Background(), image); err != nil {
		t.Skipf("container mode not testable here: image %s (%s) is not on the Docker engine (%v)", image, pgserver.EnvImage, err)
	}
	return cli
}

// ownContainers lists the pgfixture containers of this process.
func ownContainers(t *testing.T, cli *client.Client) map[string]string {
	t.Helper()
	list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{
		All: true,
		Filters: make(client.Filters).Add("label", pgserver.LabelFixture+"="+pgserver.FixtureValue,
			pgserver.LabelOwnerPID+"="+strconv.Itoa(os.Getpid())),
	})
	if err != nil {
		t.Fatalf("listing containers: %v", err)
	}
	m := map[string]string{}
	for _, c := range list.Items {
		m[c.ID] = string(c.State)
	}
	return m
}

func containerExists(t *testing.T, cli *client.Client, id string) bool {
	t.Helper()
	_, err := cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
	if cerrdefs.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatalf("inspecting container %.12s: %v", id, err)
	}
	return true
}

// startQueryClose starts a server in container mode, checks its container,
// migrates and queries a database, closes it and checks the container is gone.
func startQueryClose(t *testing.T, cli *client.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	before := ownContainers(t, cli)
	start := time.Now()
	srv, err := startContainer(ctx)
	if err != nil {
		t.Fatalf("startContainer: %v", err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = srv.Close(context.Background())
		}
	})
	t.Logf("container server up in %s: %s", time.Since(start).Round(time.Millisecond), srv.Provenance())
	if srv.Mode() != "container" {
		t.Errorf("Mode() = %q, want container", srv.Mode())
	}
	if !strings.Contains(srv.Provenance(), "Ryuk") {
		t.Errorf("Provenance does not say what became of Ryuk: %s", srv.Provenance())
	}
	var id string
	for c, state := range ownContainers(t, cli) {
		if _, ok := before[c]; !ok {
			if id != "" {
				t.Fatalf("more than one new container of this process: %s and %s", id, c)
			}
			id = c
			if state != "running" {
				t.Errorf("container %s is %s, want running", c[:12], state)
			}
		}
	}
	if id == "" {
		t.Fatalf("no container labelled %s=%s, %s=%d", pgserver.LabelFixture, pgserver.FixtureValue, pgserver.LabelOwnerPID, os.Getpid())
	}

	db, err := srv.CreateDB(ctx, SQL(`CREATE TABLE t (id serial PRIMARY KEY, v text NOT NULL)`))
	if err != nil {
		t.Fatalf("CreateDB: %v", err)
	}
	if _, err := db.Pool().Exec(ctx, `INSERT INTO t (v) VALUES ('a'), ('b')`); err != nil {
		t.Fatalf("insert: %v", err)
	}
	var n int
	var fsync string
	if err := db.Pool().QueryRow(ctx, `SELECT count(*), current_setting('fsync') FROM t`).Scan(&n, &fsync); err != nil {
		t.Fatalf("query: %v", err)
	}
	if n != 2 || fsync != "off" {
		t.Errorf("count, fsync = %d, %s; want 2, off", n, fsync)
	}
	// Logins over TCP ask for the md5 password (cheap for the client),
	// not SCRAM, and a wrong password is still refused.
	var stored, method string
	if err := db.Pool().QueryRow(ctx, `SELECT left(rolpassword, 3) FROM pg_authid WHERE rolname = 'postgres'`).Scan(&stored); err != nil {
		t.Fatalf("pg_authid: %v", err)
	}
	if err := db.Pool().QueryRow(ctx, `SELECT auth_method FROM pg_hba_file_rules WHERE type = 'host' ORDER BY line_number DESC LIMIT 1`).Scan(&method); err != nil {
		t.Fatalf("pg_hba_file_rules: %v", err)
	}
	if stored != "md5" || method != "md5" {
		t.Errorf("stored password, host auth = %s…, %s; want md5…, md5", stored, method)
	}
	wrong := db.ConnConfig()
	wrong.Password = "not-the-password"
	if conn, err := pgx.ConnectConfig(ctx, wrong); err == nil {
		_ = conn.Close(ctx)
		t.Errorf("a wrong password was accepted")
	}
	if err := db.Close(ctx, false); err != nil {
		t.Errorf("DB.Close: %v", err)
	}

	closed = true
	if err := srv.Close(ctx); err != nil {
		t.Fatalf("Server.Close: %v", err)
	}
	if containerExists(t, cli, id) {
		t.Errorf("container %s still exists after Server.Close", id[:12])
	}
}

func TestContainerStartQueryClose(t *testing.T) {
	startQueryClose(t, needImage(t))
}

// containerChildEnv names the test a child test process runs for real.
const containerChildEnv = "TWICE_PGFIXTURE_CHILD_TEST"

// inChild runs the calling test again in a new test process with env
// added, and fails when the child fails: testcontainers-go reads DOCKER_HOST
// and its settings once per process. It returns false in the child, which
// then runs the test's body.
func inChild(t *testing.T, env ...string) bool {
	t.Helper()
	if os.Getenv(containerChildEnv) == t.Name() {
		return false
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), containerChildEnv+"="+t.Name()), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("child with %s:\n%s", strings.Join(env, " "), out)
	if err != nil {
		t.Fatalf("the child test failed: %v", err)
	}
	return true
}

// TestContainerOverTCP: the engine named by DOCKER_HOST=tcp://…, as
// testcontainers-go finds it (here the local socket behind a loopback
// TCP proxy that counts its connections).
func TestContainerOverTCP(t *testing.T) {
	cli := needImage(t)
	if os.Getenv(containerChildEnv) == "" {
		socket := "/var/run/docker.sock"
		if h, ok := strings.CutPrefix(os.Getenv("DOCKER_HOST"), "unix://"); ok {
			socket = h
		} else if os.Getenv("DOCKER_HOST") != "" {
			t.Skip("DOCKER_HOST is not a unix socket")
		}
		addr, accepted := proxyToUnix(t, socket)
		inChild(t, "DOCKER_HOST=tcp://"+addr)
		if accepted() == 0 {
			t.Errorf("the child never connected to DOCKER_HOST=tcp://%s", addr)
		}
		return
	}
	startQueryClose(t, cli)
}

// proxyToUnix serves a loopback TCP port that forwards every connection to
// the unix socket, until the test ends.
func proxyToUnix(t *testing.T, socket string) (addr string, accepted func() int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	n := 0
	track := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("unix", socket)
			if err != nil {
				_ = c.Close()
				continue
			}
			track(c)
			track(u)
			mu.Lock()
			n++
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(u, c); _ = u.Close() }()
			go func() { defer wg.Done(); _, _ = io.Copy(c, u); _ = c.Close() }()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return l.Addr().String(), func() int { mu.Lock(); defer mu.Unlock(); return n }
}

func TestContainerMissingImageFailsFast(t *testing.T) {
	needDocker(t)
	const image = "twicekit/no-such-image:never"
	t.Setenv(pgserver.EnvImage, image)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	srv, err := startContainer(ctx)
	elapsed := time.Since(start)
	if err == nil {
		_ = srv.Close(context.Background())
		t.Fatalf("startContainer with image %s succeeded", image)
	}
	t.Logf("error after %s: %v", elapsed.Round(time.Millisecond), err)
	for _, want := range []string{
		"image " + image + " is not available and cannot be pulled",
		pgserver.ImageCommand,
		pgserver.EnvImage,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	if elapsed > 30*time.Second {
		t.Errorf("took %s, want a fast failure", elapsed)
	}
}

// TestContainerDockerUnreachableFailsFast: with no engine anywhere
// testcontainers-go looks (it falls back from DOCKER_HOST to the default
// socket, so the child runs in a mount namespace where that socket is
// hidden), container mode fails within seconds saying Docker is not
// reachable.
func TestContainerDockerUnreachableFailsFast(t *testing.T) {
	if os.Getenv(containerChildEnv) == "" {
		unshare, err := exec.LookPath("unshare")
		if err != nil || os.Getuid() != 0 {
			t.Skip("hiding the default Docker socket needs root and unshare (util-linux)")
		}
		for name, host := range map[string]string{
			"missing socket":  "unix:///nonexistent/twicekit/docker.sock",
			"refused tcp":     "tcp://127.0.0.1:1",
			"malformed":       "bogus://",
			"http not docker": "tcp://127.0.0.1:9",
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				cmd := exec.Command(unshare, "--mount", "sh", "-c",
					`for s in /var/run/docker.sock /run/docker.sock; do [ -e "$s" ] && mount --bind /dev/null "$s"; done; exec "$@"`, "sh",
					os.Args[0], "-test.run=^TestContainerDockerUnreachableFailsFast$", "-test.count=1", "-test.v")
				cmd.Env = append(os.Environ(), containerChildEnv+"=TestContainerDockerUnreachableFailsFast", "DOCKER_HOST="+host,
					"HOME="+t.TempDir(), pgserver.EnvImage+"=twicekit/postgres:any", pgserver.EnvRyukDisabled+"=true")
				out, err := cmd.CombinedOutput()
				t.Logf("DOCKER_HOST=%s:\n%s", host, out)
				if err != nil {
					t.Errorf("the child failed: %v", err)
				}
			})
		}
		return
	}
	start := time.Now()
	srv, err := startContainer(context.Background())
	elapsed := time.Since(start)
	if err == nil {
		_ = srv.Close(context.Background())
		t.Fatalf("startContainer with DOCKER_HOST=%s succeeded", os.Getenv("DOCKER_HOST"))
	}
	t.Logf("after %s: %v", elapsed.Round(time.Millisecond), err)
	if !strings.Contains(err.Error(), "Docker is not reachable") {
		t.Errorf("error does not say Docker is not reachable: %v", err)
	}
	if elapsed > 10*time.Second {
		t.Errorf("took %s, want at most a few seconds", elapsed)
	}
}

func TestContainerStaleOfDeadProcessRemoved(t *testing.T) {
	cli := needImage(t)
	ctx := context.Background()

	// A pid that surely belongs to no live process: a child that has exited.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	dead := pgserver.Self
	dead.PID = cmd.Process.Pid
	dead.Start = "1"
	alive := pgserver.Self

	create := func(o pgserver.Owner) string {
		res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
			Name: fmt.Sprintf("twicekit-test-stale-%d-%d", os.Getpid(), o.PID),
			Config: &container.Config{
				Image: os.Getenv(pgserver.EnvImage),
				Labels: map[string]string{
					pgserver.LabelFixture:  pgserver.FixtureValue,
					pgserver.LabelOwner:    o.String(),
					pgserver.LabelOwnerPID: strconv.Itoa(o.PID),
				},
			},
		})
		if err != nil {
			t.Fatalf("creating a container: %v", err)
		}
		t.Cleanup(func() {
			_, _ = cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true})
		})
		return res.ID
	}
	deadID := create(dead)
	aliveID := create(alive)

	removed := pgserver.ReapContainers(ctx) // what every mode's server start does
	want := []string{fmt.Sprintf("twicekit-test-stale-%d-%d (of killed process %d)", os.Getpid(), dead.PID, dead.PID)}
	if !slices.Equal(removed, want) {
		t.Errorf("the start says it removed %q, want %q", removed, want)
	}
	if containerExists(t, cli, deadID) {
		t.Errorf("the container of dead process %d was not removed", dead.PID)
	}
	if !containerExists(t, cli, aliveID) {
		t.Errorf("the container of this live process was removed")
	}
}

// The start of a container-mode server names, in its Provenance (which a
// check logs under go test -v, once per binary), the containers of killed
// test binaries it removed, as docs/postgres.md says (issue 43).
func TestContainerStartNamesTheStaleContainersItRemoved(t *testing.T) {
	cli := needImage(t)
	ctx := context.Background()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	dead := pgserver.Self
	dead.PID = cmd.Process.Pid
	dead.Start = "1"
	name := fmt.Sprintf("twicekit-test-killed-%d-%d", os.Getpid(), dead.PID)
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: name,
		Config: &container.Config{
			Image:  os.Getenv(pgserver.EnvImage),
			Labels: map[string]string{pgserver.LabelFixture: pgserver.FixtureValue, pgserver.LabelOwner: dead.String(), pgserver.LabelOwnerPID: strconv.Itoa(dead.PID)},
		},
	})
	if err != nil {
		t.Fatalf("creating a container: %v", err)
	}
	t.Cleanup(func() {
		_, _ = cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true})
	})
	srv, err := startContainer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	want := fmt.Sprintf("; removed the containers of killed test binaries: %s (of killed process %d)", name, dead.PID)
	if !strings.Contains(srv.Provenance(), want) {
		t.Errorf("the server's provenance\n%s\ndoes not say %q", srv.Provenance(), want)
	}
	if containerExists(t, cli, res.ID) {
		t.Errorf("the container of killed process %d was not removed", dead.PID)
	}
}

// TestBridgeAddressIsTakenOnlyForTheSameServer: the container's own address
// replaces the published port only when the server there is the
// container's; held against another server's connection string, it is
// refused, and the published port stays.
func TestBridgeAddressIsTakenOnlyForTheSameServer(t *testing.T) {
	needImage(t)
	ctx := context.Background()
	srv, err := startContainer(ctx)
	if err != nil {
		t.Fatalf("startContainer: %v", err)
	}
	defer func() { _ = srv.Close(ctx) }()
	ip, password := srv.adminCfg.Host, srv.adminCfg.Password
	if srv.adminCfg.Port != 5432 {
		t.Skipf("the container's own address does not answer here (%s:%d is its published port)", ip, srv.adminCfg.Port)
	}
	if _, err := pgserver.BridgeDSN(ctx, ip, password, rawAdminURL(srv)); err != nil {
		t.Errorf("pgserver.BridgeDSN against the container's own server: %v", err)
	}
	other, err := startLocal(ctx)
	if err != nil {
		t.Skipf("no second server to hold it against: %v", err)
	}
	defer func() { _ = other.Close(ctx) }()
	_, err = pgserver.BridgeDSN(ctx, ip, password, rawAdminURL(other))
	if err == nil || !strings.Contains(err.Error(), "is another server") {
		t.Errorf("pgserver.BridgeDSN against another server: %v, want an error saying it is another server", err)
	}
	if err != nil && strings.Contains(err.Error(), password) {
		t.Errorf("the error shows the password: %v", err)
	}
}
