package sched

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxAttempts is how many attempts a schedule can name (A to Z).
const MaxAttempts = 26

// Replay is a schedule as the scheduler plays it: entry n names the attempt
// (0 is A, 1 is B, ...) released at the n-th decision. Its token is printable
// and parses back to the same schedule, so the same token always replays the
// same interleaving. The public form is concurrent.Schedule; convert one with
// Replay(s).
//
// As a [Chooser], a replay releases the attempt it names when that attempt
// is waiting at a point; when it is not (it is blocked on a lock or has
// returned), or past the end of the schedule, the first waiting attempt goes.
type Replay []int

// Letter names attempt i in tokens and timelines: A, B, C, ...
func Letter(i int) string {
	if i < 0 || i >= MaxAttempts {
		return fmt.Sprintf("attempt(%d)", i)
	}
	return string(rune('A' + i))
}

// Token is the schedule in run-length form: a letter per run of releases of
// the same attempt, followed by the run's length when it is more than one
// ("A2BA3" releases A twice, B once, A three times).
func (s Replay) Token() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		b.WriteString(Letter(s[i]))
		if j-i > 1 {
			b.WriteString(strconv.Itoa(j - i))
		}
		i = j
	}
	return b.String()
}

func (s Replay) String() string { return s.Token() }

// ParseSchedule parses a token: letters A to Z, each optionally followed by a
// count ("A2B3A", "AABBBA" and "A2B3A1" are the same schedule).
func ParseSchedule(token string) (Replay, error) {
	if token == "" {
		return nil, fmt.Errorf("concurrent: empty schedule token: a token is a sequence of attempt letters with optional counts, like A2B3A1")
	}
	var s Replay
	for i := 0; i < len(token); {
		c := token[i]
		if c < 'A' || c > 'Z' {
			return nil, fmt.Errorf("concurrent: bad schedule token %q at offset %d: want an attempt letter A-Z (A is the first attempt, B the second), optionally followed by a count, like A2B3A1", token, i)
		}
		i++
		j := i
		for j < len(token) && token[j] >= '0' && token[j] <= '9' {
			j++
		}
		n := 1
		if j > i {
			var err error
			n, err = strconv.Atoi(token[i:j])
			if err != nil || n < 1 || n > 1<<16 {
				return nil, fmt.Errorf("concurrent: bad schedule token %q: count %q out of range", token, token[i:j])
			}
		}
		for k := 0; k < n; k++ {
			s = append(s, int(c-'A'))
		}
		i = j
	}
	return s, nil
}

// Attempts is the number of attempts the schedule names (the highest letter
// plus one).
func (s Replay) Attempts() int {
	m := 0
	for _, a := range s {
		if a+1 > m {
			m = a + 1
		}
	}
	return m
}

// Choose implements [Chooser].
func (s Replay) Choose(d Decision) int {
	if d.N < len(s) && d.IsReady(s[d.N]) {
		return s[d.N]
	}
	return d.Ready[0]
}
