package pgfixture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// owner identifies the process that created a fixture database or cluster,
// so that leftovers of dead processes can be told apart from live ones.
type owner struct {
	host  string
	boot  string
	pid   int
	start string // process start time in clock ticks since boot
}

var self = func() owner {
	host, _ := os.Hostname()
	return owner{host: host, boot: bootID(), pid: os.Getpid(), start: procStart(os.Getpid())}
}()

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// procStart returns field 22 of /proc/<pid>/stat, or "" if unknown.
func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

const ownerTag = "twicekit fixture"

func (o owner) String() string {
	return fmt.Sprintf("%s host=%s boot=%s pid=%d start=%s", ownerTag, o.host, o.boot, o.pid, o.start)
}

func parseOwner(s string) (owner, bool) {
	if !strings.HasPrefix(s, ownerTag+" ") {
		return owner{}, false
	}
	var o owner
	for _, f := range strings.Fields(s[len(ownerTag):]) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return owner{}, false
		}
		switch k {
		case "host":
			o.host = v
		case "boot":
			o.boot = v
		case "pid":
			n, err := strconv.Atoi(v)
			if err != nil {
				return owner{}, false
			}
			o.pid = n
		case "start":
			o.start = v
		}
	}
	return o, o.host != "" && o.pid > 0
}

// dead reports whether o is surely a process that no longer runs; it is
// false whenever that cannot be told (another host, unknown boot).
func (o owner) dead() bool {
	if o.host == "" || o.host != self.host || self.boot == "" || o.boot == "" {
		return false
	}
	if o.boot != self.boot {
		return true // this machine rebooted since
	}
	if o.pid == self.pid {
		return o.start != self.start
	}
	if err := syscall.Kill(o.pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	st := procStart(o.pid)
	return st != "" && o.start != "" && st != o.start
}

// dropStale drops fixture databases and templates left by dead processes of
// this machine, and kept databases that expired (see kept.go). Other kept databases (their
// comment says "kept") are left alone.
func (s *Server) dropStale(ctx context.Context) error {
	dbs, err := s.fixtureDatabases(ctx, s.admin)
	if err != nil {
		return fmt.Errorf("listing stale fixture databases: %w", err)
	}
	now := time.Now()
	for _, d := range dbs {
		o, ok := parseOwner(ownerPart(d.comment))
		kept, _, _ := keptInfo(d.comment)
		drop := expiredKept(d.comment, now) || (ok && !kept && o.dead())
		if !drop {
			continue
		}
		if err := s.dropDatabase(ctx, d.name); err != nil {
			return err
		}
	}
	return s.dropStaleTemplates(ctx)
}

// ownerPart is the owner's part of a database comment (before " kept").
func ownerPart(comment string) string {
	owner, _, _ := strings.Cut(comment, " kept")
	return owner
}

// dropDatabase drops a database of pgfixture's own (the name must carry the
// prefix), disconnecting its sessions, on a connection of the admin pool.
func (s *Server) dropDatabase(ctx context.Context, name string) error {
	return s.dropDatabaseOn(ctx, s.admin, name)
}

// execer is an admin pool or one of its connections.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// execQuerier is an admin pool or one of its connections, for queries too.
type execQuerier interface {
	execer
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// dropDatabaseOn is dropDatabase on conn: a caller that already holds an
// admin connection uses it, so that it never waits for a second one (eight
// callers each holding one and waiting for another would wait forever).
func (s *Server) dropDatabaseOn(ctx context.Context, conn execer, name string) error {
	if !strings.HasPrefix(name, dbPrefix) {
		return fmt.Errorf("pgfixture: refusing to drop %q: not a pgfixture database", name)
	}
	sql := "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize()
	if s.version >= 130000 {
		sql += " WITH (FORCE)"
	}
	if _, err := conn.Exec(ctx, sql); err != nil {
		return s.scrub.Error(fmt.Errorf("pgfixture: dropping database %s: %w", name, err))
	}
	return nil
}
