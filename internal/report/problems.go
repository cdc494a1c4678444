package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/reportfmt"
)

// Problem kinds, numbered as twice's ProblemKind constants, from 1: their
// names (the JSON report's, String's) and the promise a headline names.
var problemKinds = []struct{ name, promise string }{
	1:  {"panic", "the job panicked"},
	2:  {"goexit", "the job ended its goroutine"},
	3:  {"hung", "an attempt hung"},
	4:  {"stuck", "an attempt is stuck"},
	5:  {"gave-up", "the job never succeeded"},
	6:  {"foreign-context", "the job bypassed its handles"},
	7:  {"clean-run-failed", "the job failed on a clean run"},
	8:  {"foreign-session", "the job opened its own connection to the check's database"},
	9:  {"slow", "an attempt ran longer than AttemptTimeout"},
	10: {"after-run", "a goroutine the attempt started kept using its handles after Run returned"},
}

// ProblemName is the name of the problem kind k; "unknown" for none.
func ProblemName(k int) string {
	if k > 0 && k < len(problemKinds) {
		return problemKinds[k].name
	}
	return "unknown"
}

// ProblemPromise is what a headline says of the problem kind k.
func ProblemPromise(k int) string {
	if k > 0 && k < len(problemKinds) {
		return problemKinds[k].promise
	}
	return ""
}

// TimeoutBound is AttemptTimeout as a problem names it: with the timeout
// when it is known (> 0).
func TimeoutBound(timeout time.Duration) string {
	if timeout > 0 {
		return fmt.Sprintf("AttemptTimeout (%s)", timeout)
	}
	return "AttemptTimeout"
}

// HungText says that the attempt named name, at its points, was still
// running after timeout (0: not known): slow, when a statement of it still
// ran in PostgreSQL; else hung, and leaked when it did not return even
// after its context was cancelled.
func HungText(name string, points []faults.Step, timeout time.Duration, slow, leaked bool) string {
	where := "before its first point"
	if n := len(points); n > 0 {
		where = fmt.Sprintf("after point %d (%s)", n, points[n-1].Label)
	}
	if slow {
		n := len(points)
		return fmt.Sprintf("%s was still running a statement in PostgreSQL after %s: point %d (%s); it is slow, not hung. "+
			"If the job takes this long in production, give it more time with twice.AttemptTimeout(d) (every scenario plays with that bound; "+
			"twice.WallBudget bounds the whole check); its connections were cut and its context cancelled",
			name, TimeoutBound(timeout), n, points[n-1].Label)
	}
	s := fmt.Sprintf("%s hung %s", name, where)
	if timeout > 0 {
		s += fmt.Sprintf(": still running after %s (AttemptTimeout)", timeout)
	}
	s += ", with no statement running in PostgreSQL: it waited outside its handles (a channel, a mutex, time.Sleep, a network call); " +
		"if it is only slow there, give it more time with twice.AttemptTimeout(d); its connections were cut and its context cancelled"
	if leaked {
		s += ", and it still did not return: it waits on something other than its context (a channel, a mutex, time.Sleep)"
	}
	return s
}

// ForeignText says that the job used a context that is not the attempt's,
// and lists the calls refused.
func ForeignText(labels []string) string {
	var b strings.Builder
	b.WriteString("the job used a context that is not the attempt's; these calls were refused:")
	for _, l := range labels {
		b.WriteString("\n    " + l)
	}
	b.WriteString("\n  a call on the attempt's handles is the attempt's only while it runs: make every call before Run returns (wait for the goroutines it starts)")
	return b.String()
}

// SnoozedText says that the clean run snoozed on every one of its
// deliveries, the last time with err.
func SnoozedText(deliveries int, err error) string {
	return fmt.Sprintf("the job never finished on a clean run: it snoozed on every one of its %s (the last time: %v)\n(the reference run must end once before twice can compare anything with it)", reportfmt.Count(deliveries, "delivery"), err)
}

// CleanRunFailedText says that the clean run failed with err (hint: what
// the error's type tells).
func CleanRunFailedText(err error, hint string) string {
	return fmt.Sprintf("the job failed on a clean run: %v%s\n(the reference run must succeed once before twice can compare anything with it)", err, hint)
}

// Headline names the broken promises (each problem's, then "not
// idempotent" when the rows or the effects differ), each once, and the
// scenario as said.
func Headline(problemPromises []string, differs bool, said string) string {
	var promises []string
	add := func(p string) {
		for _, q := range promises {
			if q == p {
				return
			}
		}
		promises = append(promises, p)
	}
	for _, p := range problemPromises {
		add(p)
	}
	if differs {
		add("not idempotent")
	}
	return strings.Join(promises, "; ") + ": " + said
}

// endNames name how an attempt ended, numbered as twice's AttemptEnd
// constants, from 1.
var endNames = []string{
	1: "returned", 2: "returned error", 3: "crashed", 4: "crashed before the ack",
	5: "panicked", 6: "called runtime.Goexit", 7: "hung", 8: "not delivered",
}

// VerdictName names a scenario's verdict v, numbered as twice's Verdict
// constants, from 1: kept, broken; "not compared" for none.
func VerdictName(v int) string {
	switch v {
	case 1:
		return "kept"
	case 2:
		return "broken"
	}
	return "not compared"
}

// EndName names the attempt's end e; "unknown" for none.
func EndName(e int) string {
	if e > 0 && e < len(endNames) {
		return endNames[e]
	}
	return "unknown"
}

// CrashLabel is the label of the point a scenario's fault hit: the point
// a crash refused, or the effect point (point, numbered across the
// deliveries that snoozed; 0: none) whose apply or reply it struck.
func CrashLabel(attempts []Attempt, point int) string {
	for _, a := range attempts {
		if a.Crashed && a.CrashAt.Index > 0 {
			return a.CrashAt.Label
		}
	}
	if point > 0 {
		for _, a := range attempts {
			for _, st := range a.Points {
				if st.Index == point {
					return st.Label
				}
			}
		}
	}
	return ""
}
