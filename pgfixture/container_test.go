package pgfixture

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// needDocker returns a client of the Docker engine, or skips the test when
// none answers.
func needDocker(t *testing.T) *dockerAPI {
	t.Helper()
	cli, err := connectDocker(context.Background(), dockerPingTimeout)
	if err != nil {
		t.Skipf("container mode not testable here: %v", err)
	}
	t.Cleanup(cli.close)
	return cli
}

// needImage skips the test unless Docker answers and TWICE_POSTGRES_IMAGE
// names an image present on it (nothing is pulled by the tests).
func needImage(t *testing.T) *dockerAPI {
	t.Helper()
	cli := needDocker(t)
	image := os.Getenv(envImage)
	if image == "" {
		t.Skipf("container mode not testable here: %s is not set (build a local image with .ci/postgres-image/build.sh and export %s=<its name>)", envImage, envImage)
	}
	if ok, err := cli.imageExists(context.Background(), image); !ok {
		t.Skipf("container mode not testable here: image %s (%s) is not on the Docker engine (%v)", image, envImage, err)
	}
	return cli
}

// ownContainers lists the pgfixture containers of this process.
func ownContainers(t *testing.T, cli *dockerAPI) map[string]string {
	t.Helper()
	list, err := cli.containerList(context.Background(),
		labelFixture+"="+fixtureValue, labelOwnerPID+"="+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatalf("listing containers: %v", err)
	}
	m := map[string]string{}
	for _, c := range list {
		m[c.ID] = c.State
	}
	return m
}

func containerExists(t *testing.T, cli *dockerAPI, id string) bool {
	t.Helper()
	_, err := cli.containerInspect(context.Background(), id)
	if isNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatalf("inspecting container %.12s: %v", id, err)
	}
	return true
}

func TestContainerStartQueryClose(t *testing.T) {
	cli := needImage(t)
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
	t.Logf("container server up in %s at %s", time.Since(start).Round(time.Millisecond), srv.URL())
	if srv.Mode() != "container" {
		t.Errorf("Mode() = %q, want container", srv.Mode())
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
		t.Fatalf("no container labelled %s=%s, %s=%d", labelFixture, fixtureValue, labelOwnerPID, os.Getpid())
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
	if err := db.Close(ctx, false); err != nil {
		t.Errorf("DB.Close: %v", err)
	}

	closeStart := time.Now()
	closed = true
	if err := srv.Close(ctx); err != nil {
		t.Fatalf("Server.Close: %v", err)
	}
	t.Logf("closed in %s", time.Since(closeStart).Round(time.Millisecond))
	if containerExists(t, cli, id) {
		t.Errorf("container %s still exists after Server.Close", id[:12])
	}
}

func TestContainerMissingImageFailsFast(t *testing.T) {
	needDocker(t)
	const image = "twicekit/no-such-image:never"
	t.Setenv(envImage, image)
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
		".ci/postgres-image/build.sh",
		envImage,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	if elapsed > 15*time.Second {
		t.Errorf("took %s, want a fast failure", elapsed)
	}
}

func TestContainerDockerUnreachableFailsFast(t *testing.T) {
	for name, host := range map[string]string{
		"missing socket":   "unix:///nonexistent/twicekit/docker.sock",
		"blackholed tcp":   "tcp://192.0.2.1:2375", // TEST-NET-1: never answers
		"refused tcp":      "tcp://127.0.0.1:1",
		"malformed":        "bogus://",
		"http not docker":  "tcp://127.0.0.1:9",
		"non-routable ip6": "tcp://[100::1]:2375",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("DOCKER_HOST", host)
			t.Setenv(envImage, "twicekit/postgres:any")
			start := time.Now()
			srv, err := startContainer(context.Background())
			elapsed := time.Since(start)
			if err == nil {
				_ = srv.Close(context.Background())
				t.Fatalf("startContainer with DOCKER_HOST=%s succeeded", host)
			}
			t.Logf("after %s: %v", elapsed.Round(time.Millisecond), err)
			if !strings.Contains(err.Error(), "Docker") {
				t.Errorf("error does not mention Docker: %v", err)
			}
			if elapsed > 5*time.Second {
				t.Errorf("took %s, want at most a few seconds", elapsed)
			}
		})
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
	dead := self
	dead.pid = cmd.Process.Pid
	dead.start = "1"
	alive := self

	create := func(o owner) string {
		id, err := cli.containerCreate(ctx, containerSpec{
			Image: os.Getenv(envImage),
			Labels: map[string]string{
				labelFixture:  fixtureValue,
				labelOwner:    o.String(),
				labelOwnerPID: strconv.Itoa(o.pid),
			},
		})
		if err != nil {
			t.Fatalf("creating a container: %v", err)
		}
		t.Cleanup(func() { _ = cli.containerRemove(context.Background(), id) })
		return id
	}
	deadID := create(dead)
	aliveID := create(alive)

	reapContainers(ctx) // what every mode's server start does
	if containerExists(t, cli, deadID) {
		t.Errorf("the container of dead process %d was not removed", dead.pid)
	}
	if !containerExists(t, cli, aliveID) {
		t.Errorf("the container of this live process was removed")
	}
}
