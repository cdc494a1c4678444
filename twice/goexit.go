package twice

import "github.com/twicekit/twicekit/internal/report"

// abortProblem describes an attempt that ended by a panic or by
// runtime.Goexit instead of returning; redelivered says the check was
// replaying a scenario (not the reference run).
func abortProblem(rec AttemptRecord, redelivered bool) Problem {
	name, kind := attemptName(rec), ProblemPanic
	if rec.Goexit != "" {
		kind = ProblemGoexit
	}
	return Problem{Kind: kind, Attempt: name, Text: report.AbortText(name, rec.Goexit, rec.Panic, redelivered)}
}
