package twice

import (
	"github.com/twicekit/twicekit/internal/checkrun"
	"github.com/twicekit/twicekit/internal/reportfmt"
)

// usage marks err as the user's mistake in the check's options
// (checkrun.Usage): the check keeps no database for it.
func usage(err error) error { return checkrun.Usage(err) }

// count says n things with the noun agreeing: "1 point", "2 points",
// "5 deliveries".
func count(n int, noun string) string { return reportfmt.Count(n, noun) }
