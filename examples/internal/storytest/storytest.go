// Package storytest is what the examples' tests share: their TestMain and
// the check that must run (a report, not an error).
package storytest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/internal/leakcheck"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// Main is the examples' TestMain: a few rapid checks per property unless
// -rapid.checks says otherwise, and the test PostgreSQL stopped at the end.
func Main(m *testing.M) {
	story.RapidChecks(5)
	leakcheck.Exit(pgfixture.Main(m))
}

// Check runs twice.Check and fails the test if the check itself could not
// run; the report's findings are for the caller to assert.
func Check(t *testing.T, job twice.Job, opts ...twice.Option) *twice.Report {
	t.Helper()
	rep := twice.Check(context.Background(), job, opts...)
	require.NoError(t, rep.Err)
	return rep
}
