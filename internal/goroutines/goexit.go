package goroutines

import (
	"regexp"
	"strings"
)

// stackOffset is a frame's offset at the end of its location line.
var stackOffset = regexp.MustCompile(` \+0x[0-9a-f]+$`)

// GoexitSite finds, in a stack taken while runtime.Goexit unwinds the
// attempt's goroutine, the job's line that called it: the first frame below
// runtime.Goexit outside the testing packages (testing, testify, rapid).
// It prints as "file.go:LINE", without directories.
func GoexitSite(stack string) string {
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
