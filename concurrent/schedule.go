package concurrent

import "github.com/twicekit/twicekit/internal/sched"

// Schedule is an interleaving of concurrent attempts: entry n names the
// attempt (0 is A, 1 is B, ...) released at the n-th point. Its [Schedule.Token]
// is what a report prints and what a replay takes ("concurrent:A2B3A"); the
// same token always replays the same interleaving.
type Schedule []int

// Token is the schedule in run-length form: a letter per run of releases of
// the same attempt, followed by the run's length when it is more than one
// ("A2BA3" releases A twice, B once, A three times).
func (s Schedule) Token() string { return sched.Replay(s).Token() }

func (s Schedule) String() string { return s.Token() }

// Attempts is the number of attempts the schedule names (the highest letter
// plus one).
func (s Schedule) Attempts() int { return sched.Replay(s).Attempts() }

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
	r, err := sched.ParseSchedule(token)
	return Schedule(r), err
}

// Letter names attempt i in tokens and timelines: A, B, C, ...
func Letter(i int) string { return sched.Letter(i) }

// Interleavings counts the interleavings of attempts with these numbers of
// points: the multinomial (a+b+…)! / (a!·b!·…), C(a+b, a) for two. It
// saturates at math.MaxInt64.
func Interleavings(points ...int) int64 { return sched.Interleavings(points...) }
