package queue

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/goroutines"
	"github.com/twicekit/twicekit/internal/inject"
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
// AfterRunWait, before it compares.

// AfterRunWait bounds the wait for the goroutines an attempt left running.
// A goroutine still running then is a finding that states the bound.
const AfterRunWait = 2 * time.Second

// AfterRun runs once the job's function returned and the check played the
// ack (or crashed before it). It waits until the goroutines the attempt
// started (those labelled label) end, at most AfterRunWait; it does not
// wait for a hung attempt's. It returns the first call of run refused
// because its context had ended with the attempt (as a list of one), where
// the goroutines that made refused calls were started, and whether a
// goroutine still ran when the wait ended.
func AfterRun(label string, run *inject.Run, hung bool) (late, sites []string, outlived bool) {
	if label != "" && !hung {
		outlived = goroutines.Wait(label, AfterRunWait)
	}
	labels, where := run.Late(), run.LateSites()
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

// PointsBeforeAck is how many of steps came before the ack: the points
// after it (a goroutine's on a context that outlives the attempt) all come
// once Run returned, after every point of Run.
func PointsBeforeAck(steps []faults.Step) int {
	for i, st := range steps {
		if st.AfterAck {
			return i
		}
	}
	return len(steps)
}

// stillRunning is the AfterRun entry of an attempt whose goroutine made no
// refused call but still ran when the check stopped waiting for it.
var stillRunning = fmt.Sprintf("a goroutine still running %s after Run returned", AfterRunWait)

// calledAfterRun reports whether a goroutine of the attempt made a call
// refused because the attempt's context had ended.
func (a Attempt) calledAfterRun() bool {
	return len(a.AfterRun) > 0 && a.AfterRun[0] != stillRunning
}

// AfterRunProblem is the text of the problem of an attempt (named attempt)
// whose goroutine kept using its handles after Run returned (afterRun: its
// AfterRun).
func AfterRunProblem(afterRun []string, attempt string) string {
	return fmt.Sprintf("a goroutine the attempt started kept using its handles after Run returned: %s (%s)\n"+
		"(the attempt's context ended with Run, so what those calls meant to do is lost on every delivery: "+
		"wait for the goroutine before Run returns (a sync.WaitGroup), or do its work in Run)",
		strings.Join(afterRun, "; "), attempt)
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
	"(end it before Run returns, or let it end soon after: a goroutine on the attempt's context sees it end when Run returns)", AfterRunWait)

// AfterRunFinding is the text of the one finding of a check when an
// attempt of any of its scenarios (attempts: every scenario's, the
// reference run's first) was caught calling after Run or still running;
// caught is false when none was.
func AfterRunFinding(attempts []Attempt) (text string, caught bool) {
	called := false
	seen := map[string]bool{}
	var sites []string
	for _, a := range attempts {
		caught = caught || len(a.AfterRun) > 0
		called = called || a.calledAfterRun()
		for _, s := range a.AfterRunSites {
			if !seen[s] {
				seen[s] = true
				sites = append(sites, s)
			}
		}
	}
	if !caught {
		return "", false
	}
	slices.Sort(sites)
	text = outlivedText
	if called {
		text = afterRunText
	}
	if len(sites) > 0 {
		text += "\nstarted by " + strings.Join(sites, "; ")
	}
	return text, true
}
