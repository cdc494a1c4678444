package loyalty_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/loyalty"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

func TestMain(m *testing.M) { os.Exit(pgfixture.Main(m)) }

func check(t *testing.T, job twice.Job, opts ...twice.Option) *twice.Report {
	t.Helper()
	rep := twice.Check(context.Background(), job, opts...)
	require.NoError(t, rep.Err)
	return rep
}

func TestIncrementGivesThePointsAgain(t *testing.T) {
	t.Parallel()
	rep := check(t, loyalty.IncrementJob())
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue"}, story.Sequential(rep), rep.String())
	for _, f := range rep.Findings {
		if story.IsConcurrent(f.Token) {
			continue
		}
		require.Len(t, f.Database, 1, f.Token)
		d := f.Database[0]
		require.Equal(t, "customers", d.Table)
		require.Equal(t, "(id=77, name='Ann', points=170)", d.Missing[0].String())
		require.Equal(t, "(id=77, name='Ann', points=220)", d.Extra[0].String())
	}
	require.Equal(t, "not idempotent: sequential: the ack was lost and the same job was delivered again", rep.Findings[0].Headline)
}

func TestCheckThenActLosesTheRaceWithItself(t *testing.T) {
	t.Parallel()
	rep := check(t, loyalty.CheckThenActJob())
	// Sequentially, only a crash between the balance update (point 2) and the
	// log insert (point 3) shows it: the redelivery finds no log row and adds
	// the points again.
	require.Equal(t, []string{"crash@3"}, story.Sequential(rep), rep.String())
	f := rep.Findings[0]
	require.Contains(t, f.Headline, "crash before point 3 of 3 (INSERT INTO reward_log")
	require.Len(t, f.Database, 1)
	require.Equal(t, "customers", f.Database[0].Table)
	if story.RanConcurrent(rep) {
		// Two workers both run the SELECT, both see nothing, both add points.
		require.NotEmpty(t, story.Concurrent(rep), "no concurrent scenario caught the race:\n%s", rep)
	}
}

func TestLedgerIsIdempotent(t *testing.T) {
	t.Parallel()
	twice.AssertIdempotent(t, loyalty.LedgerJob())
}

func TestVerdicts(t *testing.T) {
	t.Parallel()
	for _, f := range loyalty.Forms() {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			ok, line := story.Verdict(f, twice.Check(context.Background(), f.Job, f.Options...))
			require.True(t, ok, line)
		})
	}
}
