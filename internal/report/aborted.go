package report

import "fmt"

// AbortText says that the attempt named name ended by runtime.Goexit (at
// the job's line goexit, when it is not "") or by a panic (panicText: its
// value and stack) instead of returning; redelivered says the check was
// replaying a scenario (not the reference run).
func AbortText(name, goexit, panicText string, redelivered bool) string {
	if goexit != "" {
		return fmt.Sprintf("%s called t.FailNow (or runtime.Goexit) at %s: return an error from Run instead "+
			"(t.Fatal, t.FailNow and testify's require end the goroutine they run on, which is the attempt's, not the test's; "+
			"the check stops here)", name, goexit)
	}
	then := ""
	if redelivered {
		then = " (a queue would redeliver it; the check stops here)"
	}
	return fmt.Sprintf("%s panicked%s:\n%s", name, then, Indent(panicText, "  "))
}

// StoppedAfterHangText says which scenarios a check left out after the
// first hung attempt, in the scenario token: left more sequential ones,
// and the concurrent ones when concurrentLeft.
func StoppedAfterHangText(token string, left int, concurrentLeft bool) string {
	what := fmt.Sprintf("%d more scenarios", left)
	switch {
	case left == 1:
		what = "1 more scenario"
	case left == 0 && concurrentLeft:
		what = "the concurrent scenarios"
	}
	if left > 0 && concurrentLeft {
		what += " and the concurrent ones"
	}
	return fmt.Sprintf("not run after the hang in %s: %s (each would wait out AttemptTimeout the same way; fix the hang, then check again)",
		token, what)
}
