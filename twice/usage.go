package twice

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/internal/reportfmt"
)

// usageError is an error the user made in the check's options or the
// job's setup (a token Only cannot replay, a budget that does not parse, a
// seed that does not fit the schema): the job's Run did nothing wrong, so
// the check keeps no database for it.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usage marks err as the user's mistake in the check's options.
func usage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// isUsage reports whether err is the user's mistake in the check's options.
func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// count says n things with the noun agreeing: "1 point", "2 points",
// "5 deliveries".
func count(n int, noun string) string { return reportfmt.Count(n, noun) }

// maxListedInterleavings is how many interleavings Only's error lists by
// token; past it, it says how many there are and shows the first and the
// last.
const maxListedInterleavings = 20

// concurrentTokens lists the tokens of the concurrent scenarios of a job
// whose reference run has n points: its overlaps, then its interleavings
// (every one when there are at most maxListedInterleavings, else how many
// and the first and last).
func concurrentTokens(n int) []string {
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
		first.Token(), last.Token(), countText(total), count(n, "point")))
}

// unknownOnly is the error of an Only token that names no scenario of this
// job: it lists every token the job has, the concurrent ones included when
// the check plays them.
func unknownOnly(only string, n, concurrentN int, sequential []string, cfg *config) error {
	tokens := append([]string(nil), sequential...)
	if cfg.pairOff(sameJob) == "" {
		tokens = append(tokens, concurrentTokens(concurrentN)...)
	}
	if cfg.pairOff(duplicateJobs) == "" && cfg.duplicatesByDefault() && concurrentN > 1 {
		tokens = append(tokens, fmt.Sprintf("duplicate-overlap@1 … duplicate-overlap@%d", concurrentN-1))
	}
	if _, err := parseToken(only); err != nil {
		return usage(fmt.Errorf("%w; this job's scenarios are: %s", err, strings.Join(tokens, ", ")))
	}
	points := count(n, "point")
	if cfg.conc.off == "" && concurrentN != n {
		points += fmt.Sprintf(", %d in a concurrent scenario, where an autocommit statement commits at a point of its own", concurrentN)
	}
	return usage(fmt.Errorf("twice: no scenario %q for this job (its reference run has %s); the scenarios are: %s", only, points, strings.Join(tokens, ", ")))
}
