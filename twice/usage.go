package twice

import (
	"errors"

	"github.com/twicekit/twicekit/internal/reportfmt"
	"github.com/twicekit/twicekit/internal/scenarios"
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

// unknownOnly is the error of an Only token that names no scenario of this
// job: it lists every token the job has, the concurrent ones included when
// the check plays them (scenarios.UnknownOnly).
func unknownOnly(only string, n, concurrentN int, sequential []string, cfg *config) error {
	return usage(scenarios.UnknownOnly(only, n, concurrentN, sequential, scenarios.Listing{
		SameJob:       cfg.pairOff(sameJob) == "",
		Duplicates:    cfg.pairOff(duplicateJobs) == "" && cfg.duplicatesByDefault(),
		ConcurrencyOn: cfg.conc.off == "",
	}))
}
