package twiceasynq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startRedis starts Debian's redis-server for the test, on a free loopback
// port with its files in a temp dir, and stops it when the test ends. A
// machine without redis-server skips the test, except under CI=true or
// TWICE_REQUIRE_REDIS=1, where that fails it.
func startRedis(t *testing.T) *redis.Options {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redis-server is not installed: apt-get install -y redis-server (Debian's package; .ci/run installs it)"
		if os.Getenv("CI") == "true" || os.Getenv("TWICE_REQUIRE_REDIS") == "1" {
			t.Fatalf("%s; CI=true or TWICE_REQUIRE_REDIS=1 requires it", msg)
		}
		t.Skip(msg)
	}
	var last error
	for range 3 { // the free port may be taken in between: try another
		opts, err := tryRedis(t, bin)
		if err == nil {
			return opts
		}
		last = err
	}
	t.Fatalf("starting redis-server: %v", last)
	return nil
}

func tryRedis(t *testing.T, bin string) (*redis.Options, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	var log strings.Builder
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "yes")
	cmd.Stdout, cmd.Stderr = &log, &log
	// A test binary that crashes takes its redis-server with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	opts := &redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	rc := redis.NewClient(opts)
	defer rc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rc.Ping(ctx).Err()
		cancel()
		if err == nil {
			break
		}
		select {
		case werr := <-exited:
			exited <- werr
			stop()
			return nil, fmt.Errorf("redis-server exited (%v): %s", werr, log.String())
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return nil, errors.Join(err, fmt.Errorf("redis-server did not answer PING within 10s: %s", log.String()))
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Cleanup(stop)
	return opts, nil
}

// redisLink is a loopback TCP proxy to Redis: a worker connected through it
// is cut off from Redis, as by a network partition or its machine's death,
// when the link is cut.
type redisLink struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
	cut   bool
	wg    sync.WaitGroup
}

func newRedisLink(t *testing.T, target string) *redisLink {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	k := &redisLink{l: l}
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			k.mu.Lock()
			if k.cut {
				k.mu.Unlock()
				c.Close()
				r.Close()
				continue
			}
			k.conns = append(k.conns, c, r)
			k.mu.Unlock()
			k.wg.Add(2)
			go func() { defer k.wg.Done(); _, _ = io.Copy(r, c); r.Close() }()
			go func() { defer k.wg.Done(); _, _ = io.Copy(c, r); c.Close() }()
		}
	}()
	t.Cleanup(k.Cut)
	return k
}

// Addr is the address to give the worker instead of Redis's.
func (k *redisLink) Addr() string { return k.l.Addr().String() }

// Cut closes every connection through the link and refuses new ones.
func (k *redisLink) Cut() {
	k.mu.Lock()
	k.cut = true
	for _, c := range k.conns {
		c.Close()
	}
	k.mu.Unlock()
	k.l.Close()
	k.wg.Wait()
}

// The link cut in crashAtEnd makes go-redis log its broken connections:
// the suite reads what happened from Redis, not from logs.
func init() { redis.SetLogger(quietRedis{}) }

type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}
