package shipped_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/shipped"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

var (
	rawTime = regexp.MustCompile(`20\d\d-\d\d-\d\d[T ]\d\d:\d\d`)
	rawUUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

func TestGuardedNowPassesWithNoOptions(t *testing.T) {
	t.Parallel()
	twice.AssertIdempotent(t, shipped.ShipGuardedJob())
}

func TestSignUpUnderANaturalKeyPassesWithNoOptions(t *testing.T) {
	t.Parallel()
	twice.AssertIdempotent(t, shipped.SignUpJob())
}

func TestUnguardedNowIsFlaggedAndPrintsNoTime(t *testing.T) {
	t.Parallel()
	rep := check(t, shipped.ShipCountingJob())
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue"}, story.Sequential(rep), rep.String())
	require.Equal(t, []string{"orders.shipped_at"}, rep.Varying)
	require.Equal(t, "orders:\n"+
		"  - (id=11, status='shipped', shipped_at=‹time 1›, ship_count=1)\n"+
		"  + (id=11, status='shipped', shipped_at=‹time 2›, ship_count=2)\n",
		pgfixture.FormatDiff(story.Find(rep, "sequential").Database))
	require.Empty(t, rawTime.FindAllString(rep.String(), -1), rep.String())
}

func TestSignUpWithoutANaturalKeyIsFlaggedAndPrintsNoUUID(t *testing.T) {
	t.Parallel()
	rep := check(t, shipped.SignUpNoKeyJob())
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue"}, story.Sequential(rep), rep.String())
	require.Equal(t, "signups:\n"+
		"  + (email='ann@example.com', token=‹uuid 1›)\n",
		pgfixture.FormatDiff(story.Find(rep, "sequential").Database))
	require.Empty(t, rawUUID.FindAllString(rep.String(), -1), rep.String())
}

// The report of a job writing now() is the same text every run.
func TestTheReportIsTheSameEveryRun(t *testing.T) {
	t.Parallel()
	first := check(t, shipped.ShipCountingJob(), twice.ScheduleSeed(1)).String()
	for run := 2; run <= 20; run++ {
		require.Equal(t, first, check(t, shipped.ShipCountingJob(), twice.ScheduleSeed(1)).String(), "run %d", run)
	}
}

// With twice.ExactValues() now() differs in every scenario; the hint says
// which column and what covers it, and the times still print as
// placeholders.
func TestExactValuesFlagsNowWithAHint(t *testing.T) {
	t.Parallel()
	rep := check(t, shipped.ShipGuardedJob(), twice.ExactValues(), twice.Only("sequential"))
	f := story.Find(rep, "sequential")
	require.NotNil(t, f, rep.String())
	require.Equal(t, []string{"orders differs only in shipped_at (timestamptz), a time that differs between two clean runs too (now(), time.Now()): " +
		"take it from a.Now(), the check's clock, which stands still across redeliveries, or drop twice.ExactValues() to compare it by shape (NULL or not, equal where it should be)"},
		f.Hints)
	require.Empty(t, rawTime.FindAllString(rep.String(), -1), rep.String())
}
