package concurrent

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxAttempts is how many attempts a schedule can name (A to Z).
const maxAttempts = 26

// Schedule is an interleaving of concurrent attempts: entry n names the
// attempt (0 is A, 1 is B, ...) released at the n-th point. Its [Schedule.Token]
// is what a report prints and what a replay takes ("concurrent:A2B3A"); the
// same token always replays the same interleaving.
type Schedule []int

// Token is the schedule in run-length form: a letter per run of releases of
// the same attempt, followed by the run's length when it is more than one
// ("A2BA3" releases A twice, B once, A three times).
func (s Schedule) Token() string {
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

func (s Schedule) String() string { return s.Token() }

// Attempts is the number of attempts the schedule names (the highest letter
// plus one).
func (s Schedule) Attempts() int {
	m := 0
	for _, a := range s {
		m = max(m, a+1)
	}
	return m
}

// Preemptions counts the context switches away from an attempt that still
// had points to pass. Running each attempt to its end, one after the other,
// has 0.
func (s Schedule) Preemptions() int {
	last := map[int]int{}
	for i, a := range s {
		last[a] = i
	}
	n := 0
	for i := 1; i < len(s); i++ {
		if s[i] != s[i-1] && last[s[i-1]] > i-1 {
			n++
		}
	}
	return n
}

// ParseSchedule parses a token: letters A to Z, each optionally followed by a
// count ("A2B3A", "AABBBA" and "A2B3A1" are the same schedule).
func ParseSchedule(token string) (Schedule, error) {
	if token == "" {
		return nil, fmt.Errorf("concurrent: empty schedule token: a token is a sequence of attempt letters with optional counts, like A2B3A1")
	}
	var s Schedule
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

// Letter names attempt i in tokens and timelines: A, B, C, ...
func Letter(i int) string {
	if i < 0 || i >= maxAttempts {
		return fmt.Sprintf("attempt(%d)", i)
	}
	return string(rune('A' + i))
}

// Interleavings counts the interleavings of attempts with these numbers of
// points: the multinomial (a+b+…)! / (a!·b!·…), C(a+b, a) for two. It
// saturates at math.MaxInt64.
func Interleavings(points ...int) int64 {
	var total, result int64 = 0, 1
	for _, p := range points {
		for k := int64(1); k <= int64(p); k++ {
			total++
			// result = result * total / k, exact at every step; saturate.
			if result > math.MaxInt64/total {
				return math.MaxInt64
			}
			result = result * total / k
		}
	}
	return result
}
