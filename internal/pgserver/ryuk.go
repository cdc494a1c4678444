package pgserver

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// EnvRyukDisabled turns off Ryuk, testcontainers-go's reaper: a container
// that removes the test process's containers when the process dies. It needs its image, which a
// machine without a registry does not have; there pgfixture turns it off
// and removes the containers of dead processes by their labels instead.
const EnvRyukDisabled = "TESTCONTAINERS_RYUK_DISABLED"

// ryukChoice is what container mode decided about Ryuk, and why.
type ryukChoice struct {
	note     string // for Provenance: "Ryuk on", "Ryuk off (...)"
	disabled bool   // pgfixture turned it off itself
}

// explain adds to a failed start what to do when Ryuk was the cause.
func (r ryukChoice) explain(err error) error {
	if !r.disabled && strings.Contains(err.Error(), "reaper") {
		return fmt.Errorf("%w; testcontainers-go's reaper (Ryuk) could not start: set %s=true, and pgfixture removes the containers of dead test processes by their labels", err, EnvRyukDisabled)
	}
	return err
}

// chooseRyuk turns Ryuk off, before testcontainers-go reads its settings,
// when the user has not decided and its image can be neither found nor
// pulled. testcontainers-go reads its settings once per process, so this
// must run before its first use.
func chooseRyuk(ctx context.Context) ryukChoice {
	if v, ok := os.LookupEnv(EnvRyukDisabled); ok {
		return ryukChoice{note: fmt.Sprintf("Ryuk as %s=%s says", EnvRyukDisabled, v)}
	}
	if ryukInProperties() {
		return ryukChoice{note: "Ryuk as ~/.testcontainers.properties says"}
	}
	cli, err := LocalEngine(ctx)
	if err != nil {
		// testcontainers-go may find an engine this client cannot (a
		// Docker context): it decides, with Ryuk on.
		return ryukChoice{note: "Ryuk on"}
	}
	defer cli.Close()
	image := testcontainers.ReaperDefaultImage
	ictx, cancel := context.WithTimeout(ctx, dockerPingTimeout)
	_, err = cli.ImageInspect(ictx, image)
	cancel()
	if err == nil {
		return ryukChoice{note: "Ryuk on"}
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	pullErr := pull(pctx, cli, image)
	if pullErr == nil {
		return ryukChoice{note: "Ryuk on"}
	}
	_ = os.Setenv(EnvRyukDisabled, "true")
	return ryukChoice{
		note:     fmt.Sprintf("Ryuk off (its image %s is not on the engine and cannot be pulled: %s): the containers of dead test processes are removed by label when the next one starts", image, oneLine(pullErr.Error())),
		disabled: true,
	}
}

// pull pulls image and waits for the end of the pull's stream.
func pull(ctx context.Context, cli *client.Client, image string) error {
	resp, err := cli.ImagePull(ctx, image, client.ImagePullOptions{})
	if err != nil {
		return err
	}
	defer resp.Close()
	if err := resp.Wait(ctx); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp)
	return err
}

// ryukInProperties says whether testcontainers-go's properties file sets
// ryuk.disabled.
func ryukInProperties() bool {
	home, err := os.UserHomeDir()
	if err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(home, ".testcontainers.properties"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, _, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.TrimSpace(k) == "ryuk.disabled" {
			return true
		}
	}
	return false
}

// LocalEngine is a client of the engine DOCKER_HOST names, or of the
// default socket, that answered a ping.
func LocalEngine(ctx context.Context) (*client.Client, error) {
	cli, err := client.New(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, dockerPingTimeout)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		_ = cli.Close()
		return nil, err
	}
	return cli, nil
}

// engineAPI is what removing stale containers needs of a client.
type engineAPI interface {
	ContainerList(ctx context.Context, options client.ContainerListOptions) (client.ContainerListResult, error)
	ContainerRemove(ctx context.Context, containerID string, options client.ContainerRemoveOptions) (client.ContainerRemoveResult, error)
}

// removeStaleContainers removes pgfixture containers whose owner process
// is dead (killed before it could stop its container), and returns what
// it removed, one "name (of killed process pid)" each, sorted.
// It is best effort.
func removeStaleContainers(ctx context.Context, cli engineAPI) []string {
	lctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	list, err := cli.ContainerList(lctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", LabelFixture+"="+FixtureValue),
	})
	if err != nil {
		return nil
	}
	var removed []string
	for _, c := range list.Items {
		o, ok := ParseOwner(c.Labels[LabelOwner])
		if !ok || !o.Dead() {
			continue
		}
		if _, err := cli.ContainerRemove(lctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			continue
		}
		name := c.ID
		if len(name) > 12 {
			name = name[:12]
		}
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		removed = append(removed, fmt.Sprintf("%s (of killed process %d)", name, o.PID))
	}
	slices.Sort(removed)
	return removed
}

// removeStaleContainersAt is removeStaleContainers on the engine at host
// (the one testcontainers-go found), through a client of its own: the
// client testcontainers-go hands out is another library's before its
// v0.42.0 (github.com/docker/docker's).
func removeStaleContainersAt(ctx context.Context, host string) []string {
	cli, err := client.New(client.FromEnv, client.WithHost(host), client.WithAPIVersionNegotiation())
	if err != nil {
		return nil
	}
	defer cli.Close()
	return removeStaleContainers(ctx, cli)
}

// RemovedNote is the server's note (Provenance, which a check logs under
// go test -v) naming the containers of killed test binaries that its start
// removed; "" when none.
func RemovedNote(removed []string) string {
	if len(removed) == 0 {
		return ""
	}
	return "removed the containers of killed test binaries: " + strings.Join(removed, ", ")
}

// ReapContainers removes the containers of dead pgfixture processes in any
// mode, so that a killed test binary's container goes with the next run of
// any test binary, not only of the next one in container mode.
// It only asks a Docker engine on a local socket, and gives up within a
// second.
func ReapContainers(ctx context.Context) []string {
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		host = "unix:///var/run/docker.sock"
	}
	path, ok := strings.CutPrefix(host, "unix://")
	if !ok {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	cli, err := LocalEngine(rctx)
	if err != nil {
		return nil
	}
	defer cli.Close()
	return removeStaleContainers(rctx, cli)
}
