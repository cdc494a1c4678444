package twiceasynq

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/tidwall/redcon"
)

// The store is the real Redis behind every attempt's Redis (redis.go): the
// attempt's Redis forwards each command to it, so an asynq.Inspector, a
// PING or a script of the app's own gets a real Redis's answer. It is
// Debian's redis-server where one is on the PATH, started once per test
// binary on a free loopback port and killed with it; elsewhere an embedded
// miniredis (github.com/alicebob/miniredis/v2), served in memory, with no
// listener. Each check's world has a database of its own in it, emptied
// at the start of every scenario.

// storeDatabases is how many databases the redis-server store has: as
// many checks' worlds as may be alive at once.
const storeDatabases = 4096

// store is the started Redis.
type store struct {
	name string // for docs and errors: "redis-server 7.0.15" or "miniredis (embedded)"
	addr string // redis-server's; "" for miniredis
	mini *miniredis.Miniredis
	max  int // how many databases; 0: no limit

	mu   sync.Mutex
	used map[int]bool
}

var (
	storeMu  sync.Mutex
	theStore *store
	// storeLookPath finds redis-server; a test replaces it to try the
	// fallback.
	storeLookPath = exec.LookPath
)

// sharedStore starts the store on first use and returns it.
func sharedStore() (*store, error) {
	storeMu.Lock()
	defer storeMu.Unlock()
	if theStore != nil {
		return theStore, nil
	}
	s, err := startStore()
	if err != nil {
		return nil, err
	}
	theStore = s
	return s, nil
}

func startStore() (*store, error) {
	bin, err := storeLookPath("redis-server")
	if err != nil {
		return &store{name: "miniredis (embedded)", mini: miniredis.NewMiniRedis(), used: map[int]bool{}}, nil
	}
	var last error
	for range 3 { // the free port may be taken in between: try another
		s, err := startRedisServer(bin)
		if err == nil {
			return s, nil
		}
		last = err
	}
	return nil, fmt.Errorf("twiceasynq: starting %s for the attempts' Redis: %w (take it off the PATH to use the embedded miniredis)", bin, last)
}

// startRedisServer starts redis-server on a free loopback port, keeping
// nothing on disk. It dies with the test binary (Pdeathsig); nothing waits
// for it, so no goroutine outlives a test.
func startRedisServer(bin string) (*store, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", os.TempDir(),
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "yes",
		"--databases", strconv.Itoa(storeDatabases), "--loglevel", "warning")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &store{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), max: storeDatabases, used: map[int]bool{}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ws syscall.WaitStatus
		if pid, _ := syscall.Wait4(cmd.Process.Pid, &ws, syscall.WNOHANG, nil); pid == cmd.Process.Pid {
			return nil, fmt.Errorf("redis-server exited at once (%v): is port %d taken?", ws, port)
		}
		b, err := s.dial(-1)
		if err == nil {
			info, err := b.do("INFO", "server")
			b.close()
			if err == nil {
				s.name = "redis-server " + infoField(info.String(), "redis_version")
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_, _ = cmd.Process.Wait()
			return nil, fmt.Errorf("redis-server did not answer on %s within 10s: %v", s.addr, err)
		}
		time.Sleep(5 * time.Millisecond) // waiting for a server to listen, not for a result
	}
}

func infoField(info, name string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return "(version unknown)"
}

// world is one check's database in the store; it gives it back when the
// check's state is garbage.
type world struct {
	s  *store
	db int
}

// newWorld takes a free database for owner and empties it.
func (s *store) newWorld(owner *checkState) (*world, error) {
	s.mu.Lock()
	db := -1
	for i := 0; s.max == 0 || i < s.max; i++ {
		if !s.used[i] {
			db = i
			s.used[i] = true
			break
		}
	}
	s.mu.Unlock()
	if db < 0 {
		return nil, fmt.Errorf("twiceasynq: the attempts' Redis (%s) has all its %d databases taken by checks still alive", s.name, s.max)
	}
	runtime.AddCleanup(owner, s.release, db)
	w := &world{s: s, db: db}
	if err := w.flush(); err != nil {
		return nil, err
	}
	return w, nil
}

func (s *store) release(db int) {
	s.mu.Lock()
	delete(s.used, db)
	s.mu.Unlock()
}

// flush empties the world's database: a new scenario starts from an empty
// Redis, as the check's model does.
func (w *world) flush() error {
	b, err := w.s.dial(w.db)
	if err != nil {
		return err
	}
	defer b.close()
	if r, err := b.do("FLUSHDB"); err != nil || r.Type == redcon.Error {
		return fmt.Errorf("twiceasynq: emptying the attempts' Redis (%s): %v%s", w.s.name, err, r.Data)
	}
	return nil
}

// backend is one connection to the store, on one database.
type backend struct {
	c  net.Conn
	rd *bufio.Reader
	db int
}

// dial connects to the store and selects db (none when db < 0).
func (s *store) dial(db int) (*backend, error) {
	var c net.Conn
	var err error
	if s.mini != nil {
		c, err = s.mini.Dial()
	} else {
		c, err = net.DialTimeout("tcp", s.addr, 5*time.Second)
	}
	if err != nil {
		return nil, fmt.Errorf("twiceasynq: connecting to the attempts' Redis (%s): %w", s.name, err)
	}
	b := &backend{c: c, rd: bufio.NewReader(c), db: -1}
	if db >= 0 {
		if err := b.selectDB(db); err != nil {
			b.close()
			return nil, err
		}
	}
	return b, nil
}

func (b *backend) close() { _ = b.c.Close() }

// selectDB makes db the connection's database.
func (b *backend) selectDB(db int) error {
	if b.db == db {
		return nil
	}
	r, err := b.do("SELECT", strconv.Itoa(db))
	if err == nil && r.Type == redcon.Error {
		err = errors.New(string(r.Data))
	}
	if err != nil {
		return fmt.Errorf("twiceasynq: selecting database %d of the attempts' Redis: %w", db, err)
	}
	b.db = db
	return nil
}

// do sends one command and reads its reply.
func (b *backend) do(args ...string) (redcon.RESP, error) {
	cmd := redcon.AppendArray(nil, len(args))
	for _, a := range args {
		cmd = redcon.AppendBulkString(cmd, a)
	}
	return b.roundTrip(cmd)
}

// doBytes is do with the arguments as they came.
func (b *backend) doBytes(args [][]byte) (redcon.RESP, error) {
	cmd := redcon.AppendArray(nil, len(args))
	for _, a := range args {
		cmd = redcon.AppendBulk(cmd, a)
	}
	return b.roundTrip(cmd)
}

// roundTrip writes a command as RESP and reads one reply, whole.
func (b *backend) roundTrip(cmd []byte) (redcon.RESP, error) {
	_ = b.c.SetDeadline(time.Now().Add(30 * time.Second))
	defer b.c.SetDeadline(time.Time{})
	if _, err := b.c.Write(cmd); err != nil {
		return redcon.RESP{}, err
	}
	var buf []byte
	for {
		if n, r := redcon.ReadNextRESP(buf); n > 0 {
			if n != len(buf) {
				return redcon.RESP{}, errors.New("twiceasynq: the attempts' Redis sent more than one reply")
			}
			return r, nil
		}
		if len(buf) > 0 && !strings.ContainsRune("+-:$*", rune(buf[0])) {
			return redcon.RESP{}, fmt.Errorf("twiceasynq: the attempts' Redis answered in a protocol other than RESP2 (%q)", buf[:min(len(buf), 20)])
		}
		chunk := make([]byte, 4096)
		n, err := b.rd.Read(chunk)
		if err != nil {
			return redcon.RESP{}, err
		}
		buf = append(buf, chunk[:n]...)
	}
}
