// Package goroutines labels the goroutine that runs an attempt with pprof
// labels, which the goroutines it starts inherit, and counts those of them
// still running whose function is the job's own: not the standard
// library's, a driver's, a queue's or twicekit's. twice waits on that count
// once Run returned (Wait, twice/after_run.go). It finds the job's line
// that called runtime.Goexit in the unwinding goroutine's stack
// (GoexitSite).
package goroutines

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// labelKey is the pprof label key of an attempt's goroutines.
const labelKey = "twice-attempt"

var labels atomic.Int64

// NextLabel is a label no attempt of this process had: the label of an
// attempt about to start.
func NextLabel() string { return strconv.FormatInt(labels.Add(1), 10) }

// Label labels the calling goroutine (the one that runs the job's
// function, and ends with it) with an attempt's label; the goroutines the
// job starts inherit it.
func Label(label string) {
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(labelKey, label)))
}

// Count counts the running goroutines labelled with label whose function
// is the job's (not the standard library's, pgx's or twicekit's).
func Count(label string) int {
	return labelled(freshProfile(), label)
}

// The goroutine profile reads and symbolizes every goroutine's stack: in a
// test binary with many tests waiting in t.Parallel it costs milliseconds,
// and every attempt of every check asks for one. Checks running at once
// share them: a profile that started after a Count was called answers it
// as well as one of its own would, so a Count that finds a profile being
// taken waits for it to end and takes the next one together with every
// Count that came meanwhile.
var (
	profileMu sync.Mutex
	// profileTaken is signalled when a profile ends.
	profileTaken = sync.NewCond(&profileMu)
	// profilesStarted counts the profiles started; profileRunning says
	// whether the last of them is still being taken.
	profilesStarted uint64
	profileRunning  bool
	// lastProfile is the text of the last profile taken, and its number.
	lastProfile    string
	lastProfileNum uint64
)

// freshProfile returns a goroutine profile (debug=1) that started after
// the call.
func freshProfile() string {
	profileMu.Lock()
	defer profileMu.Unlock()
	want := profilesStarted + 1 // a profile already running started before the call
	for lastProfileNum < want {
		if profileRunning {
			profileTaken.Wait()
			continue
		}
		profileRunning = true
		profilesStarted++
		num := profilesStarted
		profileMu.Unlock()
		var buf bytes.Buffer
		err := pprof.Lookup("goroutine").WriteTo(&buf, 1)
		profileMu.Lock()
		profileRunning = false
		if err != nil {
			buf.Reset() // no record: Count says 0, as it did before profiles were shared
		}
		lastProfile, lastProfileNum = buf.String(), num
		profileTaken.Broadcast()
	}
	return lastProfile
}

// labelled counts, in a goroutine profile written with debug=1,
// the goroutines labelled with label whose function is the job's. The
// profile is a header line ("goroutine profile: total N"), then one record
// per stack and labels, each "N @ pcs", "# labels: {…}" and the frames,
// innermost first, separated by blank lines.
func labelled(profile, label string) int {
	if _, rest, ok := strings.Cut(profile, "\n"); ok && strings.HasPrefix(profile, "goroutine profile:") {
		profile = rest // the header would hide the first record's count
	}
	want := fmt.Sprintf("%q:%q", labelKey, label)
	n := 0
	for _, rec := range strings.Split(profile, "\n\n") {
		if !strings.Contains(rec, want) {
			continue
		}
		entry := ""
		sc := bufio.NewScanner(strings.NewReader(rec))
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) >= 3 && f[0] == "#" && f[1] != "labels:" {
				entry = f[2]
			}
		}
		if entry == "" || libraryFunc(entry) {
			continue
		}
		fields := strings.Fields(rec)
		if len(fields) < 2 || fields[1] != "@" {
			continue
		}
		count, _ := strconv.Atoi(fields[0])
		n += count
	}
	return n
}

// libraryPrefixes are the packages whose goroutines are not the job's own
// even when the job's code started them: the drivers', the queues' and
// twicekit's.
var libraryPrefixes = []string{
	"github.com/jackc/", "github.com/riverqueue/", "github.com/hibiken/asynq", "github.com/vgarvardt/gue", "go.temporal.io/",
	"github.com/redis/", "golang.org/x/net/", "google.golang.org/grpc",
	"github.com/twicekit/twicekit/internal/", "github.com/twicekit/twicekit/twice.", "github.com/twicekit/twicekit/effects.",
	"github.com/twicekit/twicekit/pgfixture.", "github.com/twicekit/twicekit/faults.", "github.com/twicekit/twicekit/twiceriver.",
	"github.com/twicekit/twicekit/twiceasynq.", "github.com/twicekit/twicekit/twicegue.", "github.com/twicekit/twicekit/twicetemporal.",
}

// libraryFunc reports whether fn (with its offset, "pkg.f+0x1f") belongs
// to the standard library, pgx or twicekit itself.
func libraryFunc(fn string) bool {
	first, _, _ := strings.Cut(fn, "/")
	if !strings.Contains(first, ".") {
		return true // the standard library
	}
	for _, p := range libraryPrefixes {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}
