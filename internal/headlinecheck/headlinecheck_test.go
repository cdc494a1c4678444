package headlinecheck

import (
	"testing"

	"github.com/twicekit/twicekit/twice"
)

func TestAHeadlineThatClaimsARetryItsTimelineLacksDisagrees(t *testing.T) {
	once := "timeline:\n  attempt 1 of job-1:\n      1  SELECT 1\n         CRASH (crash after point 1 was applied)\n"
	twice2 := once + "  attempt 2 of job-1:\n      1  SELECT 1\n         done\n"
	for _, tc := range []struct {
		headline, timeline string
		ok                 bool
	}{
		{"not idempotent: crash before point 1 of 1 (SELECT 1), then redelivery", twice2, true},
		{"not idempotent: crash before point 1 of 1 (SELECT 1), then redelivery", once, false},
		{"crash after the last point: the worker died, and Temporal retried it", once, false},
		{"crash: the attempt timed out, and Temporal did not retry it: its RetryPolicy's MaximumAttempts was reached", once, true},
		{"crash: the attempt timed out, and Temporal did not retry it", twice2, false},
	} {
		got := agree(twice.Finding{Headline: tc.headline, Timeline: tc.timeline}) == ""
		if got != tc.ok {
			t.Errorf("%q on a timeline of %d deliveries: agree=%v, want %v", tc.headline, 1+len(tc.timeline)/len(twice2), got, tc.ok)
		}
	}
}
