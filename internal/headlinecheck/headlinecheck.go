// Package headlinecheck holds a report's headlines against their own
// timelines, for the tests of every queue adapter: a headline that names a
// retry or a redelivery has a second delivery on its timeline, and one that
// says there was none has none.
package headlinecheck

import (
	"strings"
	"testing"

	"github.com/twicekit/twicekit/twice"
)

// retryClaims are the words a headline uses for a second delivery of the
// job.
var retryClaims = []string{"retried it", "then redelivery", "delivered again", "ran it again", "redelivered"}

// noRetryClaims are the words a headline uses for a job delivered once.
var noRetryClaims = []string{"did not retry", "did not deliver it again", "not delivered again"}

// Agree fails t for every finding of rep whose headline says what its
// timeline does not show.
func Agree(t testing.TB, rep *twice.Report) {
	t.Helper()
	for _, f := range rep.Findings {
		if err := agree(f); err != "" {
			t.Errorf("%s: %s\nheadline: %s\n%s", f.Token, err, f.Headline, f.Timeline)
		}
	}
}

func agree(f twice.Finding) string {
	redelivered := strings.Contains(f.Timeline, "attempt 2 of job-1")
	denied := false
	for _, c := range noRetryClaims {
		if strings.Contains(f.Headline, c) {
			denied = true
			if redelivered {
				return "the headline says " + `"` + c + `"` + ", its timeline has a second delivery"
			}
		}
	}
	if denied {
		return ""
	}
	for _, c := range retryClaims {
		if strings.Contains(f.Headline, c) && !redelivered {
			return "the headline says " + `"` + c + `"` + ", its timeline has no second delivery"
		}
	}
	return ""
}
