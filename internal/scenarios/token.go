package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/internal/reportfmt"
)

// ParseToken reads a scenario's token back into its kind and arguments
// (Point, After, Schedule); Of and Label come from the reference run.
func ParseToken(token string) (Scenario, error) {
	at := func(prefix string) (int, bool) {
		rest, ok := strings.CutPrefix(token, prefix)
		if !ok {
			return 0, false
		}
		n, err := strconv.Atoi(rest)
		return n, err == nil && n >= 1 && strconv.Itoa(n) == rest
	}
	for k, d := range kinds {
		if d.token == nil {
			continue
		}
		kind := Kind(k)
		if token == d.token(Scenario{Kind: kind}) && !strings.HasSuffix(token, "@0") && !strings.HasSuffix(token, ":") {
			return Scenario{Kind: kind}, nil
		}
	}
	switch {
	case strings.HasPrefix(token, "concurrent:") && len(token) > len("concurrent:"):
		return Scenario{Kind: Interleaved, Schedule: strings.TrimPrefix(token, "concurrent:")}, nil
	case strings.HasPrefix(token, "duplicate-concurrent:") && len(token) > len("duplicate-concurrent:"):
		return Scenario{Kind: DuplicateInterleaved, Schedule: strings.TrimPrefix(token, "duplicate-concurrent:")}, nil
	case strings.HasPrefix(token, "redrive-"):
		dur, point, ok := strings.Cut(strings.TrimPrefix(token, "redrive-"), "@")
		d, err := time.ParseDuration(dur)
		n, nerr := strconv.Atoi(point)
		if ok && err == nil && nerr == nil && n >= 1 && d > 0 {
			return Scenario{Kind: Redrive, Point: n, After: d}, nil
		}
	}
	for _, k := range []Kind{CrashBefore, CrashAfterApply, ReplyLost, Overlap, DuplicateOverlap, StatementReplyLost} {
		prefix := strings.TrimSuffix(kinds[k].token(Scenario{Kind: k}), "0")
		if n, ok := at(prefix); ok {
			return Scenario{Kind: k, Point: n}, nil
		}
	}
	return Scenario{}, fmt.Errorf("twice: %q is not a scenario token (tokens look like once, sequential, crash@3, crash@end, duplicate-enqueue, crash-after@2, reply-lost@2, sql-reply-lost@1, redrive-48h@2, overlap@1, concurrent:A2B2A, duplicate-overlap@1, duplicate-concurrent:A2B2A)", token)
}

// IsConcurrentToken tells the tokens of concurrent scenarios ("concurrent:…",
// "overlap@…", and the concurrent duplicates' "duplicate-concurrent:…",
// "duplicate-overlap@…") from the sequential ones.
func IsConcurrentToken(t string) bool {
	return strings.HasPrefix(t, "concurrent:") || strings.HasPrefix(t, "overlap@") || IsDuplicateToken(t)
}

// IsDuplicateToken tells the tokens of the concurrent duplicates.
func IsDuplicateToken(t string) bool {
	return strings.HasPrefix(t, "duplicate-concurrent:") || strings.HasPrefix(t, "duplicate-overlap@")
}

// ShortDuration prints whole hours as "48h", whole minutes as "90m", and
// anything else as Go does.
func ShortDuration(d time.Duration) string {
	switch {
	case d > 0 && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d > 0 && d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return d.String()
}

// maxListedInterleavings is how many interleavings Only's error lists by
// token; past it, it says how many there are and shows the first and the
// last.
const maxListedInterleavings = 20

// ConcurrentTokens lists the tokens of the concurrent scenarios of a job
// whose reference run has n points: its overlaps, then its interleavings
// (every one when there are at most maxListedInterleavings, else how many
// and the first and last).
func ConcurrentTokens(n int) []string {
	if n == 0 {
		return nil
	}
	var out []string
	for k := 1; k < n; k++ {
		out = append(out, fmt.Sprintf("overlap@%d", k))
	}
	total := concurrent.Interleavings(n, n)
	if total <= maxListedInterleavings {
		var walk func(s concurrent.Schedule, a, b int)
		walk = func(s concurrent.Schedule, a, b int) {
			if a == n && b == n {
				out = append(out, "concurrent:"+s.Token())
				return
			}
			if a < n {
				walk(append(s, 0), a+1, b)
			}
			if b < n {
				walk(append(s, 1), a, b+1)
			}
		}
		walk(make(concurrent.Schedule, 0, 2*n), 0, 0)
		return out
	}
	first, last := make(concurrent.Schedule, 2*n), make(concurrent.Schedule, 2*n)
	for i := range first {
		first[i], last[i] = i/n, 1-i/n
	}
	return append(out, fmt.Sprintf("concurrent:%s … concurrent:%s (%s interleavings of A's and B's with %s each)",
		first.Token(), last.Token(), reportfmt.CountText(total), reportfmt.Count(n, "point")))
}

// Listing is what of a check's concurrent scenarios the error of an Only
// token lists.
type Listing struct {
	SameJob    bool // the overlaps and interleavings of one job ID play
	Duplicates bool // the concurrent duplicates play
	// ConcurrencyOn: the concurrent scenarios are not switched off, so
	// their points are worth naming when they differ.
	ConcurrencyOn bool
}

// UnknownOnly is the error of an Only token that names no scenario of this
// job: it lists every token the job has, the concurrent ones included when
// the check plays them (l). The job's reference run has n points, of which
// concurrentN in a concurrent scenario; sequential are the tokens of its
// sequential scenarios.
func UnknownOnly(only string, n, concurrentN int, sequential []string, l Listing) error {
	tokens := append([]string(nil), sequential...)
	if l.SameJob {
		tokens = append(tokens, ConcurrentTokens(concurrentN)...)
	}
	if l.Duplicates && concurrentN > 1 {
		tokens = append(tokens, fmt.Sprintf("duplicate-overlap@1 … duplicate-overlap@%d", concurrentN-1))
	}
	if _, err := ParseToken(only); err != nil {
		return fmt.Errorf("%w; this job's scenarios are: %s", err, strings.Join(tokens, ", "))
	}
	points := reportfmt.Count(n, "point")
	if l.ConcurrencyOn && concurrentN != n {
		points += fmt.Sprintf(", %d in a concurrent scenario, where an autocommit statement commits at a point of its own", concurrentN)
	}
	return fmt.Errorf("twice: no scenario %q for this job (its reference run has %s); the scenarios are: %s", only, points, strings.Join(tokens, ", "))
}
