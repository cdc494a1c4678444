package twice

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// A goroutine the job starts inherits the pprof labels of the goroutine
// that starts it: the job's goroutine carries a label of its attempt, so
// that once Run returned the check can tell whether goroutines the attempt
// started still run, and report the first call they make on the attempt's
// handles, which is refused (inject.ErrFinished). The finding is the attempt's, the
// same on every run: never a pass, never the next scenario's.

// afterRunLabel is the pprof label key of an attempt's goroutines.
const afterRunLabel = "twice-attempt"

// afterRunGrace bounds the wait for a call from the goroutines an attempt
// left running: a goroutine that waits longer before its first call is not
// seen. The wait ends sooner when they all end or one makes a call; a
// goroutine that waits for the attempt's context to end costs every attempt
// the whole bound, so it stays short.
const afterRunGrace = 500 * time.Millisecond

var attemptLabels atomic.Int64

// nextAttemptLabel is the label of an attempt about to start.
func nextAttemptLabel() string { return strconv.FormatInt(attemptLabels.Add(1), 10) }

// labelGoroutine labels the calling goroutine (the one that runs the job's
// function, and ends with it) with an attempt's label; the goroutines the
// job starts inherit it.
func labelGoroutine(label string) {
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(afterRunLabel, label)))
}

// afterRun runs once the job's function returned, before its context is
// cancelled. When goroutines the attempt started still run (the library's
// own, such as a pool's health check, aside), it refuses the attempt's
// calls from now on and waits, at most afterRunGrace, until one of them
// makes a call or they all end. It returns the first call refused, or
// nothing.
//
// A goroutine may have made its call, been refused and ended before the
// look (the attempt refuses its calls from the moment Run returns, and a
// loaded machine may schedule the look later): a call already refused is
// reported whether or not goroutines still run.
func (ra *runningAttempt) afterRun() []string {
	if ra.label == "" {
		return nil
	}
	if late := ra.firstLate(); late != nil {
		return late
	}
	if jobGoroutines(ra.label) == 0 {
		return nil
	}
	ra.run.Refuse()
	deadline := time.Now().Add(afterRunGrace)
	for {
		if late := ra.firstLate(); late != nil {
			return late
		}
		if !time.Now().Before(deadline) || jobGoroutines(ra.label) == 0 {
			return ra.firstLate() // a call made just before the last goroutine ended
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// firstLate is the first call refused after Run returned, as a list of one,
// or nil.
func (ra *runningAttempt) firstLate() []string {
	for _, l := range ra.run.Late() {
		if !strings.HasPrefix(l, "ROLLBACK") { // database/sql rolling back a transaction the job left open
			return []string{l}
		}
	}
	return nil
}

// jobGoroutines counts the goroutines labelled with label whose function
// is the job's (not the standard library's, pgx's or twicekit's).
func jobGoroutines(label string) int {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return 0
	}
	return labelledGoroutines(buf.String(), label)
}

// labelledGoroutines counts, in a goroutine profile written with debug=1,
// the goroutines labelled with label whose function is the job's. The
// profile is a header line ("goroutine profile: total N"), then one record
// per stack and labels, each "N @ pcs", "# labels: {…}" and the frames,
// innermost first, separated by blank lines.
func labelledGoroutines(profile, label string) int {
	if _, rest, ok := strings.Cut(profile, "\n"); ok && strings.HasPrefix(profile, "goroutine profile:") {
		profile = rest // the header would hide the first record's count
	}
	want := fmt.Sprintf("%q:%q", afterRunLabel, label)
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

func afterRunProblem(rec AttemptRecord) Problem {
	return Problem{Kind: ProblemAfterRun, Attempt: attemptName(rec),
		Text: fmt.Sprintf("a goroutine the attempt started kept using its handles after Run returned: %s (%s)\n"+
			"(the attempt's context refused those calls, so what they meant to do is lost on every delivery: "+
			"wait for the goroutine before Run returns (a sync.WaitGroup), or do its work in Run)",
			strings.Join(rec.AfterRun, "; "), attemptName(rec))}
}

// When a goroutine the job started outlives Run, when its calls come is the
// scheduler's and the machine's load's to decide: the reference run's look
// may see its first call, or miss it (the goroutine slept past the look),
// and then a later scenario's look sees its own goroutine's, or the late
// call lands in the next attempt on the same handles (a call on
// context.Background() is the running attempt's). Which delivery caught
// it, which call came first and what the other scenarios then saw are
// racing details. So a check in which any attempt was caught reports one
// finding, the same words every run: the reference run's, with no
// timeline, call or attempt named, and without the other scenarios' results
// (what those goroutines did to them is the same race).

// afterRunText is the problem of a check whose job's goroutine used the
// attempt's handles after Run returned.
const afterRunText = "a goroutine the attempt started kept using its handles after Run returned: " +
	"the check refused its calls, so what they meant to do is lost on every delivery\n" +
	"(wait for the goroutine before Run returns (a sync.WaitGroup), or do its work in Run; " +
	"when its calls come depends on the machine's load, so the report names no call, no attempt and no other scenario's result)"

// afterRunFinding rewrites rep, when an attempt of any of its scenarios was
// caught calling after Run, to the one finding that says so.
func afterRunFinding(rep *Report, q queueConfig) {
	if rep.Reference == nil || len(rep.Reference.Attempts) == 0 || rep.Err != nil {
		return
	}
	caught := false
	for _, sr := range append([]*ScenarioRun{rep.Reference}, rep.Scenarios...) {
		for _, a := range sr.Attempts {
			caught = caught || len(a.AfterRun) > 0
		}
	}
	if !caught {
		return
	}
	ref := rep.Reference
	ref.Verdict = Broken
	f := &Finding{Scenario: ref.Scenario, Token: ref.Scenario.Token(),
		Problems: []Problem{{Kind: ProblemAfterRun, Attempt: attemptName(ref.Attempts[0]), Text: afterRunText}}}
	view := &ScenarioRun{Scenario: ref.Scenario}
	f.Headline = headline(f, view, q.describe)
	f.run = view
	rep.Findings, rep.Scenarios = []Finding{*f}, nil
	rep.stoppedEarly, rep.leftOut, rep.wallLeft, rep.covered, rep.coveredN = "", "", "", "", 0
}
