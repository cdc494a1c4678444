package attempt

import (
	"regexp"
	"strings"
)

var (
	stackOffset = regexp.MustCompile(` \+0x[0-9a-f]+$`)
	stackArgs   = regexp.MustCompile(`\([^()]*\)$`)
)

// CleanStack keeps the frames from the panic to the job's entry (the frame
// below it is the goroutine Go made, and is left out), without goroutine
// numbers, addresses, offsets or directories, so the same panic always
// prints the same text.
func CleanStack(stack string) string {
	lines := strings.Split(strings.TrimSpace(stack), "\n")
	var out []string
	started := false
	for i := 0; i+1 < len(lines); i++ {
		fn := strings.TrimSpace(lines[i])
		if strings.HasPrefix(fn, "goroutine ") {
			continue
		}
		if !strings.HasPrefix(lines[i+1], "\t") {
			continue
		}
		loc := stackOffset.ReplaceAllString(strings.TrimSpace(lines[i+1]), "")
		i++
		if strings.HasPrefix(fn, "panic(") {
			started = true
			continue
		}
		if !started {
			continue
		}
		if strings.HasPrefix(fn, "created by ") {
			break
		}
		fn = stackArgs.ReplaceAllString(fn, "(...)")
		if slash := strings.LastIndex(loc, "/"); slash >= 0 {
			loc = loc[slash+1:]
		}
		out = append(out, "    "+fn+"\n        "+loc)
	}
	if len(out) > 0 {
		out = out[:len(out)-1] // the goroutine's entry: Go's, not the job's
	}
	return strings.Join(out, "\n")
}
