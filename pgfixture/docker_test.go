package pgfixture

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// frame is one frame of a multiplexed log stream.
func frame(stream byte, payload string) []byte {
	b := []byte{stream, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[4:], uint32(len(payload)))
	return append(b, payload...)
}

func TestDemuxLogs(t *testing.T) {
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, tc := range []struct {
		name    string
		in      []byte
		want    string
		wantErr string
	}{
		{name: "empty", in: nil, want: ""},
		{
			name: "stdout and stderr interleaved",
			in:   join(frame(1, "initdb: ok\n"), frame(2, "FATAL: oops\n"), frame(1, ""), frame(1, "done\n")),
			want: "initdb: ok\nFATAL: oops\ndone\n",
		},
		{
			name: "a payload larger than a read buffer",
			in:   frame(2, strings.Repeat("x", 70000)),
			want: strings.Repeat("x", 70000),
		},
		{
			name:    "cut inside a payload",
			in:      join(frame(1, "first\n"), frame(2, "second\n")[:11]),
			want:    "first\nsec",
			wantErr: "reading a log frame (3 of 7 bytes): unexpected EOF",
		},
		{
			name:    "cut inside a header",
			in:      join(frame(1, "first\n"), []byte{2, 0, 0}),
			want:    "first\n",
			wantErr: "reading a log frame header: unexpected EOF",
		},
		{
			name:    "a raw (TTY) stream",
			in:      []byte("LOG:  database system is ready\n"),
			want:    "",
			wantErr: "reading the log: 4c 4f 47 3a 20 20 64 61 is not a frame header",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := demuxLogs(&out, bytes.NewReader(tc.in))
			if got := out.String(); got != tc.want {
				t.Errorf("output = %q, want %q", got, tc.want)
			}
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tc.wantErr {
				t.Errorf("error = %q, want %q", gotErr, tc.wantErr)
			}
		})
	}
}

func TestParseDockerHost(t *testing.T) {
	for _, tc := range []struct {
		host, tlsVerify, certPath string
		want                      dockerEndpoint
		wantErr                   string
	}{
		{host: "", want: dockerEndpoint{"unix", "/var/run/docker.sock", "unix:///var/run/docker.sock"}},
		{host: "unix:///run/user/1000/docker.sock", want: dockerEndpoint{"unix", "/run/user/1000/docker.sock", "unix:///run/user/1000/docker.sock"}},
		{host: "tcp://10.1.2.3:2376", want: dockerEndpoint{"tcp", "10.1.2.3:2376", "tcp://10.1.2.3:2376"}},
		{host: "tcp://docker", want: dockerEndpoint{"tcp", "docker:2375", "tcp://docker"}},
		{host: "tcp://[::1]:2375/", want: dockerEndpoint{"tcp", "[::1]:2375", "tcp://[::1]:2375/"}},
		{host: "http://127.0.0.1:2375", want: dockerEndpoint{"tcp", "127.0.0.1:2375", "http://127.0.0.1:2375"}},
		{
			host: "tcp://10.1.2.3:2376", tlsVerify: "1",
			wantErr: "container: cannot use Docker at DOCKER_HOST=tcp://10.1.2.3:2376: DOCKER_TLS_VERIFY or DOCKER_CERT_PATH asks for TLS, which pgfixture does not speak; " +
				"reach the engine over a unix socket or plain tcp:// (an ssh tunnel to its socket does), or give a server in TWICE_DATABASE_URL",
		},
		{
			host: "tcp://10.1.2.3:2376", certPath: "/home/me/.docker",
			wantErr: "container: cannot use Docker at DOCKER_HOST=tcp://10.1.2.3:2376: DOCKER_TLS_VERIFY or DOCKER_CERT_PATH asks for TLS, which pgfixture does not speak; " +
				"reach the engine over a unix socket or plain tcp:// (an ssh tunnel to its socket does), or give a server in TWICE_DATABASE_URL",
		},
		{
			host: "https://docker.example:2376",
			wantErr: "container: cannot use Docker at DOCKER_HOST=https://docker.example:2376: https is TLS, which pgfixture does not speak; " +
				"reach the engine over a unix socket or plain tcp:// (an ssh tunnel to its socket does), or give a server in TWICE_DATABASE_URL",
		},
		{
			host: "ssh://me@build-host",
			wantErr: "container: cannot use Docker at DOCKER_HOST=ssh://me@build-host: pgfixture does not speak ssh; " +
				"forward the engine's socket (ssh -nNT -L /tmp/docker.sock:/var/run/docker.sock me@build-host) and set DOCKER_HOST=unix:///tmp/docker.sock",
		},
		{host: "bogus://", wantErr: `container: cannot use Docker at DOCKER_HOST=bogus://: scheme "bogus" is not supported; use unix:///path/to/docker.sock or tcp://host:port`},
		{host: "/var/run/docker.sock", wantErr: "container: cannot use Docker at DOCKER_HOST=/var/run/docker.sock: not a URL; use unix:///path/to/docker.sock or tcp://host:port"},
		{host: "unix://", wantErr: "container: cannot use Docker at DOCKER_HOST=unix://: no socket path; use unix:///path/to/docker.sock or tcp://host:port"},
		{host: "tcp://:2375", wantErr: "container: cannot use Docker at DOCKER_HOST=tcp://:2375: not host:port; use unix:///path/to/docker.sock or tcp://host:port"},
	} {
		got, err := parseDockerHost(tc.host, tc.tlsVerify, tc.certPath)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tc.want || gotErr != tc.wantErr {
			t.Errorf("parseDockerHost(%q, %q, %q) = %+v, %q; want %+v, %q", tc.host, tc.tlsVerify, tc.certPath, got, gotErr, tc.want, tc.wantErr)
		}
	}
}

func TestNegotiateAPIVersion(t *testing.T) {
	for _, tc := range []struct{ server, want, wantErr string }{
		{server: "", want: "1.41"},
		{server: "1.41", want: "1.41"},
		{server: "1.40", want: "1.40"},
		{server: "1.52", want: "1.52"},
		{server: "1.56", want: "1.56"},
		{server: "1.60", want: "1.56"},
		{server: "2.0", want: "1.56"},
		{server: "1.39", wantErr: "the engine's API version 1.39 is older than 1.40 (Docker 19.03): upgrade Docker"},
		{server: "v1", wantErr: `the engine's API version "v1" is not a version`},
	} {
		got, err := negotiateAPIVersion(tc.server)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tc.want || gotErr != tc.wantErr {
			t.Errorf("negotiateAPIVersion(%q) = %q, %q; want %q, %q", tc.server, got, gotErr, tc.want, tc.wantErr)
		}
	}
}

func TestPullRef(t *testing.T) {
	for in, want := range map[string]string{
		"postgres":                        "postgres:latest",
		"postgres:15-alpine":              "postgres:15-alpine",
		"localhost:5000/pg":               "localhost:5000/pg:latest",
		"localhost:5000/pg:15":            "localhost:5000/pg:15",
		"ghcr.io/o/pg@sha256:0123abcd":    "ghcr.io/o/pg@sha256:0123abcd",
		"twicekit/postgres:15-local":      "twicekit/postgres:15-local",
		"registry.example/team/postgres":  "registry.example/team/postgres:latest",
		"registry.example:443/team/pg:16": "registry.example:443/team/pg:16",
	} {
		if got := pullRef(in); got != want {
			t.Errorf("pullRef(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPullStreamError(t *testing.T) {
	ok := `{"status":"Pulling from library/postgres","id":"15-alpine"}
{"status":"Downloading","progressDetail":{"current":1,"total":2},"id":"a1"}
{"status":"Status: Downloaded newer image for postgres:15-alpine"}
`
	if err := pullStreamError(strings.NewReader(ok)); err != nil {
		t.Errorf("a successful pull: %v", err)
	}
	failed := `{"status":"Pulling from library/postgres","id":"15-alpine"}
{"errorDetail":{"message":"toomanyrequests: rate limit"},"error":"toomanyrequests: rate limit (legacy)"}
`
	if err := pullStreamError(strings.NewReader(failed)); err == nil || err.Error() != "toomanyrequests: rate limit" {
		t.Errorf("a failed pull: %v, want toomanyrequests: rate limit", err)
	}
	if err := pullStreamError(strings.NewReader(`{"status":`)); err == nil || err.Error() != "reading the pull's progress: unexpected EOF" {
		t.Errorf("a cut stream: %v", err)
	}
}

func TestContainerSpec(t *testing.T) {
	b, err := json.Marshal(containerSpecFor("twicekit/postgres:15-local", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Image":"twicekit/postgres:15-local",` +
		`"Env":["POSTGRES_USER=postgres","POSTGRES_PASSWORD=s3cret","POSTGRES_DB=postgres","PGDATA=/var/lib/twicekit/pgdata","POSTGRES_INITDB_ARGS=--no-sync"],` +
		`"Cmd":["postgres","-c","fsync=off","-c","synchronous_commit=off","-c","full_page_writes=off","-c","max_connections=200","-c","shared_buffers=64MB","-c","jit=off","-c","timezone=UTC"],` +
		`"Labels":{"twicekit.fixture":"pgfixture","twicekit.owner":` + strconv.Quote(self.String()) + `,"twicekit.owner-pid":"` + strconv.Itoa(os.Getpid()) + `"},` +
		`"ExposedPorts":{"5432/tcp":{}},` +
		`"HostConfig":{"PortBindings":{"5432/tcp":[{"HostIp":"","HostPort":""}]},"Tmpfs":{"/var/lib/twicekit":"rw,mode=1777"}}}`
	if string(b) != want {
		t.Errorf("spec =\n%s\nwant\n%s", b, want)
	}
}

func TestHostPort(t *testing.T) {
	var s containerState
	if err := json.Unmarshal([]byte(`{"State":{"Status":"running","Running":true},"NetworkSettings":{"Ports":{"5432/tcp":[{"HostIp":"0.0.0.0","HostPort":"32782"},{"HostIp":"::","HostPort":"32782"}]}}}`), &s); err != nil {
		t.Fatal(err)
	}
	if p, err := s.hostPort("5432/tcp"); p != 32782 || err != nil {
		t.Errorf("hostPort = %d, %v; want 32782", p, err)
	}
	if p, err := s.hostPort("6379/tcp"); p != 0 || err == nil || err.Error() != "port 6379/tcp is not published yet" {
		t.Errorf("hostPort of an unpublished port = %d, %v", p, err)
	}
}

func TestImageUnavailableError(t *testing.T) {
	got := imageUnavailableError("postgres:15-alpine", errors.New("Docker engine answered 500: Get \"https://registry-1.docker.io/v2/\":\n no such host")).Error()
	want := `container: image postgres:15-alpine is not available and cannot be pulled: build one with .ci/postgres-image/build.sh or set TWICE_POSTGRES_IMAGE (pull: Docker engine answered 500: Get "https://registry-1.docker.io/v2/": no such host)`
	if got != want {
		t.Errorf("error =\n%s\nwant\n%s", got, want)
	}
}

// fakeEngine serves a Docker Engine API on a unix socket and points
// DOCKER_HOST at it.
// It records every request as "METHOD path query".
type fakeEngine struct {
	mu       sync.Mutex
	requests []string
	host     string
}

func newFakeEngine(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, body []byte)) *fakeEngine {
	t.Helper()
	dir, err := os.MkdirTemp("", "dk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "d.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeEngine{host: "unix://" + sock}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		q, _ := url.QueryUnescape(r.URL.RawQuery)
		f.mu.Lock()
		f.requests = append(f.requests, strings.TrimSpace(r.Method+" "+r.URL.Path+" "+q))
		f.mu.Unlock()
		handle(w, r, body)
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	t.Setenv("DOCKER_HOST", f.host)
	return f
}

// seen returns the requests so far, without the bridge network's (asked
// only inside a container).
func (f *fakeEngine) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		if !strings.HasSuffix(r, "/networks/bridge") {
			out = append(out, r)
		}
	}
	return out
}

func TestDockerNotAnEngine(t *testing.T) {
	f := newFakeEngine(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		http.NotFound(w, r)
	})
	_, err := connectDocker(context.Background(), dockerPingTimeout)
	want := "container: Docker is not reachable at " + f.host + " (GET /_ping answered 404 Not Found); start Docker or set DOCKER_HOST"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

// TestContainerStartFailure drives startContainer against a fake engine
// that refuses to start the container and echoes its password: the error
// carries the engine's message and the container's log with the password
// masked, and the container is removed.
func TestContainerStartFailure(t *testing.T) {
	t.Setenv(envImage, "twicekit/postgres:15-local")
	var password string
	f := newFakeEngine(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch r.Method + " " + r.URL.Path {
		case "GET /_ping":
			w.Header().Set("API-Version", "1.41")
			io.WriteString(w, "OK")
		case "GET /v1.41/containers/json":
			io.WriteString(w, "[]")
		case "GET /v1.41/images/twicekit/postgres:15-local/json":
			io.WriteString(w, "{}")
		case "POST /v1.41/containers/create":
			var spec containerSpec
			_ = json.Unmarshal(body, &spec)
			for _, e := range spec.Env {
				if p, ok := strings.CutPrefix(e, "POSTGRES_PASSWORD="); ok {
					password = p
				}
			}
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"Id":"0123456789abcdef","Warnings":[]}`)
		case "POST /v1.41/containers/0123456789abcdef/start":
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"message":"cannot start with POSTGRES_PASSWORD=`+password+`"}`)
		case "GET /v1.41/containers/0123456789abcdef/logs":
			w.Write(frame(1, "starting with "+password+"\n"))
			w.Write(frame(2, "FATAL: no\n"))
		case "DELETE /v1.41/containers/0123456789abcdef":
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	})
	srv, err := startContainer(context.Background())
	if err == nil {
		srv.Close(context.Background())
		t.Fatal("startContainer succeeded against an engine that cannot start containers")
	}
	if len(password) != 32 {
		t.Fatalf("the create request had password %q, want 32 hex digits", password)
	}
	want := "container: starting twicekit/postgres:15-local: Docker engine answered 500: cannot start with POSTGRES_PASSWORD=xxxxx\n" +
		"container log:\nstarting with xxxxx\nFATAL: no"
	if err.Error() != want {
		t.Errorf("error =\n%s\nwant\n%s", err, want)
	}
	wantReqs := []string{
		"GET /_ping",
		`GET /v1.41/containers/json all=1&filters={"label":["twicekit.fixture=pgfixture"]}`,
		"GET /v1.41/images/twicekit/postgres:15-local/json",
		"POST /v1.41/containers/create",
		"POST /v1.41/containers/0123456789abcdef/start",
		"GET /v1.41/containers/0123456789abcdef/logs stderr=1&stdout=1&tail=200",
		"GET /_ping",
		"DELETE /v1.41/containers/0123456789abcdef force=1&v=1",
	}
	if got := f.seen(); !reflect.DeepEqual(got, wantReqs) {
		t.Errorf("requests =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantReqs, "\n"))
	}
}

// TestContainerStoppedEarly: a container that exits before PostgreSQL
// answers fails the start at once, with its status and log.
func TestContainerStoppedEarly(t *testing.T) {
	t.Setenv(envImage, "pg:bad")
	f := newFakeEngine(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch r.Method + " " + r.URL.Path {
		case "GET /_ping":
			w.Header().Set("API-Version", "1.60")
			io.WriteString(w, "OK")
		case "GET /v1.56/containers/json":
			io.WriteString(w, "[]")
		case "GET /v1.56/images/pg:bad/json":
			io.WriteString(w, "{}")
		case "POST /v1.56/containers/create":
			io.WriteString(w, `{"Id":"c1"}`)
		case "POST /v1.56/containers/c1/start":
			w.WriteHeader(http.StatusNoContent)
		case "GET /v1.56/containers/c1/json":
			io.WriteString(w, `{"State":{"Status":"exited","Running":false,"ExitCode":1},"NetworkSettings":{"Ports":{}}}`)
		case "GET /v1.56/containers/c1/logs":
			w.Write(frame(2, "initdb: error: invalid locale settings\n"))
		case "DELETE /v1.56/containers/c1":
			http.Error(w, `{"message":"No such container: c1"}`, http.StatusNotFound)
		default:
			http.NotFound(w, r)
		}
	})
	_, err := startContainer(context.Background())
	want := "container: starting pg:bad: the container stopped (status exited, exit code 1) before PostgreSQL accepted connections\n" +
		"container log:\ninitdb: error: invalid locale settings"
	if err == nil || err.Error() != want {
		t.Errorf("error =\n%v\nwant\n%s", err, want)
	}
	if got := f.seen(); got[len(got)-1] != "DELETE /v1.56/containers/c1 force=1&v=1" {
		t.Errorf("last request %q, want the removal", got[len(got)-1])
	}
}

func TestPostgresHosts(t *testing.T) {
	tcp, err := parseDockerHost("tcp://10.1.2.3:2375", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := postgresHosts(context.Background(), nil, tcp, false), []string{"10.1.2.3", "127.0.0.1", "::1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tcp DOCKER_HOST: %q, want %q", got, want)
	}
	newFakeEngine(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.URL.Path == "/v1.41/networks/bridge" {
			io.WriteString(w, `{"Name":"bridge","IPAM":{"Config":[{"Subnet":"172.17.0.0/16","Gateway":"172.17.0.1"}]}}`)
			return
		}
		http.NotFound(w, r)
	})
	e, err := dockerEndpointFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	cli := newDockerAPI(e)
	defer cli.close()
	if got, want := postgresHosts(context.Background(), cli, e, true), []string{"172.17.0.1", "127.0.0.1", "::1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("in a container: %q, want %q", got, want)
	}
	if got, want := postgresHosts(context.Background(), cli, e, false), []string{"127.0.0.1", "::1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("on the host: %q, want %q", got, want)
	}
}
