package twice

import (
	"github.com/twicekit/twicekit/internal/checkrun"
	"github.com/twicekit/twicekit/internal/reportfmt"
	"github.com/twicekit/twicekit/internal/scenarios"
)

// usage marks err as the user's mistake in the check's options
// (checkrun.Usage): the check keeps no database for it.
func usage(err error) error { return checkrun.Usage(err) }

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
