package pgfixture

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// A minimal client of the Docker Engine HTTP API: the few calls container
// mode makes, over the standard library.
const (
	defaultDockerSocket = "/var/run/docker.sock"

	// dockerMaxAPIVersion is the highest API version this client asks for.
	// The client uses the engine's version when that is lower.
	dockerMaxAPIVersion = "1.56"

	// dockerMinAPIVersion is the lowest API version this client accepts.
	// It is Docker 19.03's.
	dockerMinAPIVersion = "1.40"

	// dockerDefaultAPIVersion is used when the engine's ping names no
	// version.
	dockerDefaultAPIVersion = "1.41"
)

// dockerEndpoint is where the Docker engine listens.
type dockerEndpoint struct {
	network string // "unix" or "tcp"
	address string // a socket path, or host:port
	host    string // DOCKER_HOST as given, or the default socket's URL
}

// parseDockerHost reads DOCKER_HOST (host) and the TLS settings
// (tlsVerify, certPath) the way the docker CLI does.
// It refuses TLS and ssh:// with an error that says what to do instead.
func parseDockerHost(host, tlsVerify, certPath string) (dockerEndpoint, error) {
	if host == "" {
		host = "unix://" + defaultDockerSocket
	}
	refuse := func(why, todo string) (dockerEndpoint, error) {
		return dockerEndpoint{}, fmt.Errorf("container: cannot use Docker at DOCKER_HOST=%s: %s; %s", host, why, todo)
	}
	const useSocket = "use unix:///path/to/docker.sock or tcp://host:port"
	const noTLS = "reach the engine over a unix socket or plain tcp:// (an ssh tunnel to its socket does), or give a server in TWICE_DATABASE_URL"
	scheme, rest, ok := strings.Cut(host, "://")
	if !ok {
		return refuse("not a URL", useSocket)
	}
	switch scheme {
	case "unix":
		if rest == "" {
			return refuse("no socket path", useSocket)
		}
		return dockerEndpoint{network: "unix", address: rest, host: host}, nil
	case "tcp", "http":
		if tlsVerify != "" || certPath != "" {
			return refuse("DOCKER_TLS_VERIFY or DOCKER_CERT_PATH asks for TLS, which pgfixture does not speak", noTLS)
		}
		u, err := url.Parse("tcp://" + rest)
		if err != nil || u.Hostname() == "" || (u.Path != "" && u.Path != "/") {
			return refuse("not host:port", useSocket)
		}
		port := u.Port()
		if port == "" {
			port = "2375"
		}
		return dockerEndpoint{network: "tcp", address: net.JoinHostPort(u.Hostname(), port), host: host}, nil
	case "https":
		return refuse("https is TLS, which pgfixture does not speak", noTLS)
	case "ssh":
		return refuse("pgfixture does not speak ssh",
			"forward the engine's socket (ssh -nNT -L /tmp/docker.sock:/var/run/docker.sock "+rest+") and set DOCKER_HOST=unix:///tmp/docker.sock")
	default:
		return refuse(fmt.Sprintf("scheme %q is not supported", scheme), useSocket)
	}
}

// dockerEndpointFromEnv reads DOCKER_HOST, DOCKER_TLS_VERIFY and
// DOCKER_CERT_PATH.
func dockerEndpointFromEnv() (dockerEndpoint, error) {
	return parseDockerHost(os.Getenv("DOCKER_HOST"), os.Getenv("DOCKER_TLS_VERIFY"), os.Getenv("DOCKER_CERT_PATH"))
}

// dockerAPI talks to one Docker engine.
type dockerAPI struct {
	endpoint  dockerEndpoint
	transport *http.Transport
	client    *http.Client
	version   string // the negotiated API version, e.g. "1.41"
}

// newDockerAPI makes a client of the engine at e.
// It sends nothing until the first call.
func newDockerAPI(e dockerEndpoint) *dockerAPI {
	var d net.Dialer
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, e.network, e.address)
		},
		// No idle connections: nothing lingers after a call.
		DisableKeepAlives: true,
	}
	return &dockerAPI{endpoint: e, transport: tr, client: &http.Client{Transport: tr}, version: dockerDefaultAPIVersion}
}

// close releases the client's connections.
func (c *dockerAPI) close() { c.transport.CloseIdleConnections() }

// dockerError is an error status of the engine with its message.
type dockerError struct {
	status  int
	message string
}

func (e *dockerError) Error() string {
	if e.message == "" {
		return fmt.Sprintf("Docker engine answered %d %s", e.status, http.StatusText(e.status))
	}
	return fmt.Sprintf("Docker engine answered %d: %s", e.status, e.message)
}

// isNotFound says whether err is the engine's 404.
func isNotFound(err error) bool {
	var de *dockerError
	return errors.As(err, &de) && de.status == http.StatusNotFound
}

// readDockerError makes a dockerError of an error response.
// The engine sends {"message": "..."}; anything else is kept as text.
func readDockerError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var m struct {
		Message string `json:"message"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &m) == nil && m.Message != "" {
		msg = m.Message
	}
	return &dockerError{status: resp.StatusCode, message: oneLine(msg)}
}

// call sends a request to the versioned path and returns the response of a
// 2xx status, or the engine's error.
// The caller closes the body.
func (c *dockerAPI) call(ctx context.Context, method, path string, query url.Values, body any) (*http.Response, error) {
	u := "http://docker/v" + c.version + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotModified {
		defer resp.Body.Close()
		return nil, readDockerError(resp)
	}
	return resp, nil
}

// callJSON sends a request and decodes the JSON answer into out (nil to
// discard it).
func (c *dockerAPI) callJSON(ctx context.Context, method, path string, query url.Values, body, out any) error {
	resp, err := c.call(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// ping checks that a Docker engine answers and negotiates the API version.
func (c *dockerAPI) ping(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/_ping", nil)
	if err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /_ping answered %s", resp.Status)
	}
	if resp.Header.Get("Api-Version") == "" && strings.TrimSpace(string(b)) != "OK" {
		return errors.New("GET /_ping answered neither an API-Version header nor OK: not a Docker engine")
	}
	v, err := negotiateAPIVersion(resp.Header.Get("Api-Version"))
	if err != nil {
		return err
	}
	c.version = v
	return nil
}

// negotiateAPIVersion returns the API version to use with an engine whose
// ping answered server.
func negotiateAPIVersion(server string) (string, error) {
	if server == "" {
		return dockerDefaultAPIVersion, nil
	}
	if _, ok := parseAPIVersion(server); !ok {
		return "", fmt.Errorf("the engine's API version %q is not a version", server)
	}
	if apiVersionLess(server, dockerMinAPIVersion) {
		return "", fmt.Errorf("the engine's API version %s is older than %s (Docker 19.03): upgrade Docker", server, dockerMinAPIVersion)
	}
	if apiVersionLess(dockerMaxAPIVersion, server) {
		return dockerMaxAPIVersion, nil
	}
	return server, nil
}

// parseAPIVersion splits "1.41" into its numbers.
func parseAPIVersion(v string) ([2]int, bool) {
	major, minor, ok := strings.Cut(v, ".")
	a, err1 := strconv.Atoi(major)
	b, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil {
		return [2]int{}, false
	}
	return [2]int{a, b}, true
}

// apiVersionLess says whether API version a is older than b.
func apiVersionLess(a, b string) bool {
	x, _ := parseAPIVersion(a)
	y, _ := parseAPIVersion(b)
	return x[0] < y[0] || (x[0] == y[0] && x[1] < y[1])
}

// imagePath is the path of an image reference, each segment escaped.
func imagePath(image string) string {
	segs := strings.Split(image, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// imageExists says whether the engine has image.
func (c *dockerAPI) imageExists(ctx context.Context, image string) (bool, error) {
	err := c.callJSON(ctx, http.MethodGet, "/images/"+imagePath(image)+"/json", nil, nil, nil)
	if isNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// pullRef adds the tag latest to a reference without a tag or digest, as
// docker pull does.
// Without a tag, the engine would pull every tag.
func pullRef(image string) string {
	name := image[strings.LastIndex(image, "/")+1:]
	if strings.Contains(name, ":") || strings.Contains(image, "@") {
		return image
	}
	return image + ":latest"
}

// imagePull pulls image once.
// The engine answers 200 and then reports errors in its progress stream,
// so the stream is read to its end.
func (c *dockerAPI) imagePull(ctx context.Context, image string) error {
	resp, err := c.call(ctx, http.MethodPost, "/images/create", url.Values{"fromImage": {pullRef(image)}}, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return pullStreamError(resp.Body)
}

// pullStreamError returns the first error a pull's progress stream reports.
func pullStreamError(r io.Reader) error {
	dec := json.NewDecoder(r)
	for {
		var m struct {
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading the pull's progress: %w", err)
		}
		if m.ErrorDetail.Message != "" {
			return errors.New(m.ErrorDetail.Message)
		}
		if m.Error != "" {
			return errors.New(m.Error)
		}
	}
}

// containerSpec is the body of POST /containers/create: only the fields
// container mode sets.
type containerSpec struct {
	Image        string              `json:"Image"`
	Env          []string            `json:"Env,omitempty"`
	Cmd          []string            `json:"Cmd,omitempty"`
	Labels       map[string]string   `json:"Labels,omitempty"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts,omitempty"`
	HostConfig   containerHostConfig `json:"HostConfig"`
}

type containerHostConfig struct {
	PortBindings map[string][]portBinding `json:"PortBindings,omitempty"`
	Tmpfs        map[string]string        `json:"Tmpfs,omitempty"`
}

type portBinding struct {
	HostIP   string `json:"HostIp"`
	HostPort string `json:"HostPort"`
}

// containerCreate creates a container and returns its id.
func (c *dockerAPI) containerCreate(ctx context.Context, spec containerSpec) (string, error) {
	var out struct {
		ID string `json:"Id"`
	}
	if err := c.callJSON(ctx, http.MethodPost, "/containers/create", nil, spec, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

// containerStart starts a created container.
func (c *dockerAPI) containerStart(ctx context.Context, id string) error {
	return c.callJSON(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/start", nil, nil, nil)
}

// containerState is what container mode reads of GET /containers/{id}/json.
type containerState struct {
	State struct {
		Status   string `json:"Status"`
		Running  bool   `json:"Running"`
		ExitCode int    `json:"ExitCode"`
	} `json:"State"`
	NetworkSettings struct {
		Ports map[string][]portBinding `json:"Ports"`
	} `json:"NetworkSettings"`
}

// hostPort returns the host port published for the container port port
// (e.g. "5432/tcp").
func (s containerState) hostPort(port string) (uint16, error) {
	for _, b := range s.NetworkSettings.Ports[port] {
		if n, err := strconv.ParseUint(b.HostPort, 10, 16); err == nil && n != 0 {
			return uint16(n), nil
		}
	}
	return 0, fmt.Errorf("port %s is not published yet", port)
}

// containerInspect returns the state of a container.
func (c *dockerAPI) containerInspect(ctx context.Context, id string) (containerState, error) {
	var s containerState
	err := c.callJSON(ctx, http.MethodGet, "/containers/"+url.PathEscape(id)+"/json", nil, nil, &s)
	return s, err
}

// containerRemove kills and removes a container with its volumes.
func (c *dockerAPI) containerRemove(ctx context.Context, id string) error {
	return c.callJSON(ctx, http.MethodDelete, "/containers/"+url.PathEscape(id), url.Values{"force": {"1"}, "v": {"1"}}, nil, nil)
}

// listedContainer is what container mode reads of GET /containers/json.
type listedContainer struct {
	ID     string            `json:"Id"`
	State  string            `json:"State"`
	Labels map[string]string `json:"Labels"`
}

// containerList lists all containers (running or not) whose labels match
// every one of labels ("key=value").
func (c *dockerAPI) containerList(ctx context.Context, labels ...string) ([]listedContainer, error) {
	filters, err := json.Marshal(map[string][]string{"label": labels})
	if err != nil {
		return nil, err
	}
	var out []listedContainer
	err = c.callJSON(ctx, http.MethodGet, "/containers/json", url.Values{"all": {"1"}, "filters": {string(filters)}}, nil, &out)
	return out, err
}

// containerLogs returns the last lines of a container's output, stdout and
// stderr in the order they were written.
func (c *dockerAPI) containerLogs(ctx context.Context, id string, lines int) ([]byte, error) {
	resp, err := c.call(ctx, http.MethodGet, "/containers/"+url.PathEscape(id)+"/logs",
		url.Values{"stdout": {"1"}, "stderr": {"1"}, "tail": {strconv.Itoa(lines)}}, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	err = demuxLogs(&out, io.LimitReader(resp.Body, 1<<20))
	return out.Bytes(), err
}

// bridgeGateway returns the gateway address of the engine's default bridge
// network.
// Seen from a container on that network, it is the engine's host.
func (c *dockerAPI) bridgeGateway(ctx context.Context) (string, error) {
	var n struct {
		IPAM struct {
			Config []struct {
				Gateway string `json:"Gateway"`
			} `json:"Config"`
		} `json:"IPAM"`
	}
	if err := c.callJSON(ctx, http.MethodGet, "/networks/bridge", nil, nil, &n); err != nil {
		return "", err
	}
	for _, cfg := range n.IPAM.Config {
		if cfg.Gateway != "" {
			return cfg.Gateway, nil
		}
	}
	return "", errors.New("the bridge network has no gateway")
}

// demuxLogs copies the payloads of a multiplexed log stream to w.
// A container without a TTY sends frames: an 8-byte header (the stream,
// 1 stdout or 2 stderr, three zero bytes, the payload's length as a
// big-endian uint32), then the payload.
// A stream that ends inside a frame is io.ErrUnexpectedEOF, after what came
// before it was written.
func demuxLogs(w io.Writer, r io.Reader) error {
	br := bufio.NewReader(r)
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading a log frame header: %w", err)
		}
		if hdr[0] > 2 || hdr[1] != 0 || hdr[2] != 0 || hdr[3] != 0 {
			return fmt.Errorf("reading the log: % x is not a frame header", hdr)
		}
		n := int64(binary.BigEndian.Uint32(hdr[4:]))
		if m, err := io.CopyN(w, br, n); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("reading a log frame (%d of %d bytes): %w", m, n, err)
		}
	}
}

// dockerPingError is the error of an engine that does not answer.
func dockerPingError(host string, err error) error {
	return fmt.Errorf("container: Docker is not reachable at %s (%s); start Docker or set DOCKER_HOST", host, oneLine(err.Error()))
}

// connectDocker makes a client of the engine DOCKER_HOST names (or the
// default socket) and checks within timeout that it answers.
func connectDocker(ctx context.Context, timeout time.Duration) (*dockerAPI, error) {
	e, err := dockerEndpointFromEnv()
	if err != nil {
		return nil, err
	}
	c := newDockerAPI(e)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.ping(pctx); err != nil {
		c.close()
		return nil, dockerPingError(e.host, err)
	}
	return c, nil
}
