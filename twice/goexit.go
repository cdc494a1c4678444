package twice

import (
	"fmt"
	"strings"
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
// attempt's goroutine, the job's line that called it: the first frame below
// runtime.Goexit outside the testing packages (testing, testify, rapid).
// It prints as "file.go:LINE", without directories.
func goexitSite(stack string) string {
	lines := strings.Split(strings.TrimSpace(stack), "\n")
	below := false
	for i := 0; i+1 < len(lines); i++ {
		fn := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(lines[i+1], "\t") {
			continue
		}
		loc := stackOffset.ReplaceAllString(strings.TrimSpace(lines[i+1]), "")
		i++
		if strings.HasPrefix(fn, "runtime.Goexit(") {
			below = true
			continue
		}
		if !below || testingFrame(fn) {
			continue
		}
		if slash := strings.LastIndex(loc, "/"); slash >= 0 {
			loc = loc[slash+1:]
		}
		return loc
	}
	return "an unknown line"
}

// testingFrame reports whether fn belongs to a testing library that calls
// runtime.Goexit on the job's behalf, or is a TB method that does (a
// wrapper's FailNow, Fatal, Fatalf, SkipNow, Skip, Skipf).
func testingFrame(fn string) bool {
	for _, p := range []string{"testing.", "github.com/stretchr/testify/", "pgregory.net/rapid.", "gotest.tools/"} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	name := fn
	if i := strings.Index(name, "("); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndex(name, "."); i >= 0 {
		name = name[i+1:]
	}
	switch name {
	case "FailNow", "Fatal", "Fatalf", "SkipNow", "Skip", "Skipf":
		return true
	}
	return false
}
