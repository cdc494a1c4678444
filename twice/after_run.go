package twice

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twicekit/twicekit/faults"
)

// A goroutine the job starts inherits the pprof labels of the goroutine
// that starts it: the job's goroutine carries a label of its attempt, so
// that once Run returned the check can wait for the goroutines the attempt
// started (the library's own, such as a pool's health check, aside).
// When Run returns, the attempt's context ends, as every queue ends it. A
// goroutine's call on that context (or one derived from it) is refused and
// recorded with where the goroutine was started: in production it fails on
// every delivery. A goroutine on a context that outlives the attempt
// (context.WithoutCancel, context.Background()) runs on after the ack, as
// in production: its calls are the attempt's later points
// (inject.Step.AfterAck), where a crash is the worker dying after the ack,
// and no redelivery follows. The check waits for those goroutines, at most
// afterRunWait, before it compares.

// afterRunLabel is the pprof label key of an attempt's goroutines.
const afterRunLabel = "twice-attempt"

// afterRunWait bounds the wait for the goroutines an attempt left running.
// A goroutine still running then is a finding that states the bound.
const afterRunWait = 2 * time.Second

var attemptLabels atomic.Int64

// nextAttemptLabel is the label of an attempt about to start.
func nextAttemptLabel() string { return strconv.FormatInt(attemptLabels.Add(1), 10) }

// labelGoroutine labels the calling goroutine (the one that runs the job's
// function, and ends with it) with an attempt's label; the goroutines the
// job starts inherit it.
func labelGoroutine(label string) {
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(afterRunLabel, label)))
}

// afterRun runs once the job's function returned and the check played the
// ack (or crashed before it). It waits until the goroutines the attempt
// started end, at most afterRunWait; it does not wait for a hung attempt's.
// It returns the first call refused because its context had ended with the
// attempt (as a list of one), where the goroutines that made refused calls
// were started, and whether a goroutine still ran when the wait ended.
func (ra *runningAttempt) afterRun(hung bool) (late, sites []string, outlived bool) {
	if ra.label != "" && !hung {
		deadline := time.Now().Add(afterRunWait)
		for jobGoroutines(ra.label) > 0 {
			if !time.Now().Before(deadline) {
				outlived = true
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	labels, where := ra.run.Late(), ra.run.LateSites()
	seen := map[string]bool{}
	for i, l := range labels {
		if strings.HasPrefix(l, "ROLLBACK") { // database/sql rolling back a transaction the job left open
			continue
		}
		if late == nil {
			late = []string{l}
		}
		if i < len(where) && where[i] != "" && !seen[where[i]] {
			seen[where[i]] = true
			sites = append(sites, where[i])
		}
	}
	if outlived && late == nil {
		late = []string{stillRunning}
	}
	slices.Sort(sites)
	return late, sites, outlived
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

// pointsBeforeAck is how many of steps came before the ack: the points
// after it (a goroutine's on a context that outlives the attempt) all come
// once Run returned, after every point of Run.
func pointsBeforeAck(steps []faults.Step) int {
	for i, st := range steps {
		if st.AfterAck {
			return i
		}
	}
	return len(steps)
}

// stillRunning is the AfterRun entry of an attempt whose goroutine made no
// refused call but still ran when the check stopped waiting for it.
var stillRunning = fmt.Sprintf("a goroutine still running %s after Run returned", afterRunWait)

// calledAfterRun reports whether a goroutine of the attempt made a call
// refused because the attempt's context had ended.
func (a AttemptRecord) calledAfterRun() bool {
	return len(a.AfterRun) > 0 && a.AfterRun[0] != stillRunning
}

func afterRunProblem(rec AttemptRecord) Problem {
	return Problem{Kind: ProblemAfterRun, Attempt: attemptName(rec),
		Text: fmt.Sprintf("a goroutine the attempt started kept using its handles after Run returned: %s (%s)\n"+
			"(the attempt's context ended with Run, so what those calls meant to do is lost on every delivery: "+
			"wait for the goroutine before Run returns (a sync.WaitGroup), or do its work in Run)",
			strings.Join(rec.AfterRun, "; "), attemptName(rec))}
}

// When a goroutine the job started outlives Run, the check waits for it
// before the next scenario, but a goroutine that outlives the wait may
// still call in a later scenario's attempt, and which call came first is
// the scheduler's to decide. So a check in which any attempt was caught
// reports one finding, the same words every run: the reference run's, with
// no call and no attempt named, and without the other scenarios' results.
// It names where the goroutines were started, sorted: the go statement is
// the same on every run.

// afterRunText is the problem of a check whose job's goroutine used the
// attempt's context after Run returned.
const afterRunText = "a goroutine the attempt started kept using its handles after Run returned: " +
	"the attempt's context ended with Run (every queue ends it), so its calls fail and what they meant to do is lost on every delivery\n" +
	"(wait for the goroutine before Run returns (a sync.WaitGroup), or do its work in Run; " +
	"work meant to run after the ack takes a context that outlives the attempt, context.WithoutCancel(ctx))"

// outlivedText is the problem of a check whose job's goroutine was still
// running when the check stopped waiting for it.
var outlivedText = fmt.Sprintf("a goroutine the attempt started was still running %s after Run returned: "+
	"the check waits that long for the goroutines an attempt leaves running, then compares, so what it does later is not seen\n"+
	"(end it before Run returns, or let it end soon after: a goroutine on the attempt's context sees it end when Run returns)", afterRunWait)

// afterRunFinding rewrites rep, when an attempt of any of its scenarios was
// caught calling after Run, to the one finding that says so.
func afterRunFinding(rep *Report, q queueConfig) {
	if rep.Reference == nil || len(rep.Reference.Attempts) == 0 || rep.Err != nil {
		return
	}
	caught, called := false, false
	seen := map[string]bool{}
	var sites []string
	for _, sr := range append([]*ScenarioRun{rep.Reference}, rep.Scenarios...) {
		for _, a := range sr.Attempts {
			caught = caught || len(a.AfterRun) > 0
			called = called || a.calledAfterRun()
			for _, s := range a.afterRunSites {
				if !seen[s] {
					seen[s] = true
					sites = append(sites, s)
				}
			}
		}
	}
	if !caught {
		return
	}
	slices.Sort(sites)
	text := outlivedText
	if called {
		text = afterRunText
	}
	if len(sites) > 0 {
		text += "\nstarted by " + strings.Join(sites, "; ")
	}
	ref := rep.Reference
	ref.Verdict = Broken
	f := &Finding{Scenario: ref.Scenario, Token: ref.Scenario.Token(),
		Problems: []Problem{{Kind: ProblemAfterRun, Attempt: attemptName(ref.Attempts[0]), Text: text}}}
	view := &ScenarioRun{Scenario: ref.Scenario}
	f.Headline = headline(f, view, q.describe)
	f.run = view
	rep.Findings, rep.Scenarios = []Finding{*f}, nil
	rep.stoppedEarly, rep.leftOut, rep.wallLeft, rep.covered, rep.coveredN = "", "", "", "", 0
}
