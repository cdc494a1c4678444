package sched

import "github.com/twicekit/twicekit/concurrent"

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
func Letter(i int) string { return concurrent.Letter(i) }

// Token is the schedule in run-length form (concurrent.Schedule's token).
func (s Replay) Token() string { return concurrent.Schedule(s).Token() }

func (s Replay) String() string { return s.Token() }

// ParseSchedule parses a token as concurrent.ParseSchedule does.
func ParseSchedule(token string) (Replay, error) {
	s, err := concurrent.ParseSchedule(token)
	return Replay(s), err
}

// Attempts is the number of attempts the schedule names (the highest letter
// plus one).
func (s Replay) Attempts() int { return concurrent.Schedule(s).Attempts() }

// Choose implements [Chooser].
func (s Replay) Choose(d Decision) int {
	if d.N < len(s) && d.IsReady(s[d.N]) {
		return s[d.N]
	}
	return d.Ready[0]
}
