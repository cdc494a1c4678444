package scenarios

import (
	"flag"
	"reflect"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/generators"
)

// Property-based checks.
//
// When AssertIdempotent or ExpectIdempotent get a *rapid.T, the check draws
// the scenarios it runs from it, after the reference run has shown how many
// points the job has: a labelled draw "twice scenarios" of up to
// the budget's RapidScenarios distinct scenarios of the plan (sequential, crash@1..n,
// crash@end, duplicate-enqueue, ...), shrinking toward fewer and earlier ones.
// So rapid shrinks the job's input and the schedule together, to the smallest
// input and the earliest scenario that still fail, and saves the failing case
// in a fail file (testdata/rapid/<Test>/...) that every later `go test`
// replays first.
//
// Under rapid the failure text is a deterministic function of the draws (rapid
// only accepts a shrink step whose failure replays identically), and its
// replay line names rapid's seed instead of the scenario alone:
//
//	replay: go test ./pkg -run '^TestX$' -rapid.seed=N (N as rapid's "To reproduce" line says; ...)
//
// A failing check under rapid does not keep its database: rapid replays many
// failing cases while it shrinks. Replay the shrunk case with TWICE_KEEP_DB=1
// to keep one.

// Draw draws the scenarios of one rapid check out of all: a labelled draw
// "twice scenarios" of up to max distinct ones (0: every one), shrinking
// toward fewer and earlier ones.
func Draw[S interface{ Token() string }](rt *rapid.T, all []S, max int) []S {
	if len(all) == 0 || max == 0 {
		return all
	}
	idx := generators.Subset(len(all), max).Draw(rt, "twice scenarios")
	picked := make([]S, len(idx))
	tokens := make([]string, len(idx))
	for i, j := range idx {
		picked[i] = all[j]
		tokens[i] = all[j].Token()
	}
	rt.Logf("twice: drew %s of the %d planned scenarios (the overlaps run besides them)", strings.Join(tokens, ", "), len(all))
	return picked
}

// RapidReplayLine is the replay line of a failure under rapid; cmd is the
// line that replays the scenario outside rapid. The seed is not known
// inside the property (and must not be printed there: the text has to be
// the same for every replay of the same draws), so the line points at
// rapid's own "To reproduce" line for it.
func RapidReplayLine(cmd, token string, drawn bool) string {
	if i := strings.Index(cmd, " -twice.run="); i >= 0 {
		cmd = cmd[:i]
	}
	which := "rapid drew scenario " + token
	if !drawn {
		which = "the check ran scenario " + token + " besides the scenarios rapid drew (every drawn case runs the overlaps)"
	}
	return cmd + " -rapid.seed=N\n" +
		"  N is the seed on rapid's \"To reproduce\" line; with no flag, go test replays the shrunk case from\n" +
		"  the fail file rapid saved under testdata/rapid/ (commit it to keep it as a regression test).\n" +
		"  " + which + "; add -twice.run=" + token + " to run only it on the same inputs."
}

// FailureText is a check's failure (text, its report) as a test under rapid
// prints it: its replay line (replay, of the first finding's token, which
// rapid drew or not) names rapid's seed and keeps the token, and the
// failure rapid prints last says when its shrinking stopped at its time
// limit (ShrinkNote; started is when the check began).
func FailureText(rt *rapid.T, text, replay, token string, drawn bool, started time.Time) string {
	old := "\nreplay: " + replay + "\n"
	text = strings.Replace(text+"\n", old, "\nreplay: "+RapidReplayLine(replay, token, drawn)+"\n", 1)
	text = strings.TrimSuffix(text, "\n")
	if note := ShrinkNote(rt, started); note != "" {
		text += "\n" + note
	}
	return text
}

// rapid shrinks a failing case for at most -rapid.shrinktime (30 s by
// default), then prints the smallest failing case it has, without saying
// that it stopped there. A check is slow next to rapid's usual
// properties, so the limit is often what ends the shrinking: the failure
// rapid prints last (its replay of the shrunk case, with the log) says so.
//
// rapid does not tell the property which of its runs a *rapid.T is; its
// fields do: a failure on a random stream is found (the first) or
// reproduced (the second), and shrinking starts when the reproduction
// ends; the last run replays the shrunk case with tbLog set. Without those
// fields (another rapid) no note is made.

// ShrinkNote records a failing check under rt that started at started, and
// returns the note for rapid's last replay of the shrunk case when the
// shrinking ran to its time limit ("" otherwise).
func ShrinkNote(rt *rapid.T, started time.Time) string { return shrinkClocks.failed(rt, started) }

// shrinkClocks times, per test, the shrinking of its failing case.
var shrinkClocks = &shrinkClock{runs: map[string]*shrinkRun{}}

type shrinkClock struct {
	mu   sync.Mutex
	runs map[string]*shrinkRun
}

type shrinkRun struct {
	random int       // failures on a random stream: found, then reproduced
	start  time.Time // when the reproduction ended: shrinking starts
}

// failed records a failing check under rt that started at started, and
// returns the note for rapid's last replay of the shrunk case when the
// shrinking ran to its time limit ("" otherwise).
func (sc *shrinkClock) failed(rt *rapid.T, started time.Time) string {
	final, random, ok := rapidRunOf(rt)
	if !ok {
		return ""
	}
	limit, ok := rapidShrinkTime()
	if !ok {
		return ""
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	r := sc.runs[rt.Name()]
	if r == nil {
		r = &shrinkRun{}
		sc.runs[rt.Name()] = r
	}
	if final {
		delete(sc.runs, rt.Name()) // the run of rapid.Check ends with it
		if r.start.IsZero() || started.Before(r.start.Add(limit)) {
			return ""
		}
		return "twice: rapid stopped shrinking at its time limit (-rapid.shrinktime): this case may not be the smallest that fails; " +
			"run again with a larger -rapid.shrinktime (for example -rapid.shrinktime=10m) to shrink it further"
	}
	if random {
		r.random++
		if r.random == 2 {
			r.start = time.Now()
		}
	}
	return ""
}

// rapidRunOf says whether rt is rapid's last replay of a shrunk case
// (final) and whether it draws from a random stream (finding or
// reproducing a failure, not shrinking or replaying); ok is false when
// rapid's T has not the fields that tell.
func rapidRunOf(rt *rapid.T) (final, random, ok bool) {
	v := reflect.ValueOf(rt).Elem()
	tbLog, stream := v.FieldByName("tbLog"), v.FieldByName("s")
	if !tbLog.IsValid() || tbLog.Kind() != reflect.Bool || !stream.IsValid() || stream.Kind() != reflect.Interface || stream.IsNil() {
		return false, false, false
	}
	random = strings.HasSuffix(stream.Elem().Type().String(), ".randomBitStream")
	if f := flag.Lookup("rapid.v"); f != nil && f.Value.String() == "true" {
		return false, random, true // -rapid.v logs every run: the last one is not told apart
	}
	return tbLog.Bool() && !random, random, true
}

// rapidShrinkTime is the value of rapid's -rapid.shrinktime flag.
func rapidShrinkTime() (time.Duration, bool) {
	f := flag.Lookup("rapid.shrinktime")
	if f == nil {
		return 0, false
	}
	d, err := time.ParseDuration(f.Value.String())
	return d, err == nil && d > 0
}
