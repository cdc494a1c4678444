package pgserver

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Owner identifies the process that created a fixture database or cluster,
// so that leftovers of dead processes can be told apart from live ones.
type Owner struct {
	Host  string
	Boot  string
	PID   int
	Start string // process start time in clock ticks since boot
}

// Self is this process, as an Owner.
var Self = func() Owner {
	host, _ := os.Hostname()
	return Owner{Host: host, Boot: bootID(), PID: os.Getpid(), Start: procStart(os.Getpid())}
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

// String is the owner as fixture databases' comments and containers'
// labels hold it; ParseOwner reads it back.
func (o Owner) String() string {
	return fmt.Sprintf("%s host=%s boot=%s pid=%d start=%s", ownerTag, o.Host, o.Boot, o.PID, o.Start)
}

// ParseOwner reads an Owner from its String; false when s is not one.
func ParseOwner(s string) (Owner, bool) {
	if !strings.HasPrefix(s, ownerTag+" ") {
		return Owner{}, false
	}
	var o Owner
	for _, f := range strings.Fields(s[len(ownerTag):]) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return Owner{}, false
		}
		switch k {
		case "host":
			o.Host = v
		case "boot":
			o.Boot = v
		case "pid":
			n, err := strconv.Atoi(v)
			if err != nil {
				return Owner{}, false
			}
			o.PID = n
		case "start":
			o.Start = v
		}
	}
	return o, o.Host != "" && o.PID > 0
}

// Dead reports whether o is surely a process that no longer runs; it is
// false whenever that cannot be told (another host, unknown boot).
func (o Owner) Dead() bool {
	if o.Host == "" || o.Host != Self.Host || Self.Boot == "" || o.Boot == "" {
		return false
	}
	if o.Boot != Self.Boot {
		return true // this machine rebooted since
	}
	if o.PID == Self.PID {
		return o.Start != Self.Start
	}
	if err := syscall.Kill(o.PID, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	st := procStart(o.PID)
	return st != "" && o.Start != "" && st != o.Start
}
