package twice

import (
	"fmt"

	"github.com/twicekit/twicekit/internal/goroutines"
)

// abortProblem describes an attempt that ended by a panic or by
// runtime.Goexit instead of returning; redelivered says the check was
// replaying a scenario (not the reference run).
func abortProblem(rec AttemptRecord, redelivered bool) Problem {
	name := attemptName(rec)
	if rec.Goexit != "" {
		return Problem{Kind: ProblemGoexit, Attempt: name, Text: fmt.Sprintf("%s called t.FailNow (or runtime.Goexit) at %s: return an error from Run instead "+
			"(t.Fatal, t.FailNow and testify's require end the goroutine they run on, which is the attempt's, not the test's; "+
			"the check stops here)", name, rec.Goexit)}
	}
	then := ""
	if redelivered {
		then = " (a queue would redeliver it; the check stops here)"
	}
	return Problem{Kind: ProblemPanic, Attempt: name, Text: fmt.Sprintf("%s panicked%s:\n%s", name, then, indent(rec.Panic, "  "))}
}

// goexitSite finds, in a stack taken while runtime.Goexit unwinds the
// attempt's goroutine, the job's line that called it (internal/goroutines).
var goexitSite = goroutines.GoexitSite
