package loyalty_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/internal/storytest"
	"github.com/twicekit/twicekit/examples/loyalty"
	"github.com/twicekit/twicekit/twice"
)

func TestMain(m *testing.M) { storytest.Main(m) }

var check = storytest.Check

func TestIncrementGivesThePointsAgain(t *testing.T) {
	t.Parallel()
	rep := check(t, loyalty.IncrementJob())
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue"}, story.Sequential(rep), rep.String())
	for _, tok := range story.Sequential(rep) {
		f := story.Find(rep, tok)
		require.Equal(t, []string{"customers"}, story.Tables(f), tok)
		d := f.Database[0]
		require.Equal(t, "(id=77, name='Ann', points=170)", d.Missing[0].String())
		require.Equal(t, "(id=77, name='Ann', points=220)", d.Extra[0].String())
	}
	require.Equal(t, "not idempotent: sequential: the ack was lost and the same job was delivered again", rep.Findings[0].Headline)
	require.NotEmpty(t, story.Concurrent(rep), "two increments at once add twice:\n%s", rep)
}

func TestCheckThenActAddsAgainAfterACrash(t *testing.T) {
	t.Parallel()
	rep := check(t, loyalty.CheckThenActJob())
	// Sequentially, only a crash between the balance update (point 2) and the
	// log insert (point 3) shows it: the redelivery finds no log row and adds
	// the points again.
	require.Equal(t, []string{"crash@3"}, story.Sequential(rep), rep.String())
	f := story.Find(rep, "crash@3")
	require.Contains(t, f.Headline, "crash before point 3 of 3 (INSERT INTO reward_log")
	require.Equal(t, []string{"customers"}, story.Tables(f))
	// Two workers both run the SELECT, both see nothing, both add points.
	require.NotEmpty(t, story.Concurrent(rep), "no concurrent scenario caught the race:\n%s", rep)
}

func TestCheckThenActInATransactionIsARace(t *testing.T) {
	t.Parallel()
	rep := check(t, loyalty.CheckThenActInTxJob())
	require.Empty(t, story.Sequential(rep), "no sequential scenario can split a transaction:\n%s", rep)
	require.True(t, story.RanConcurrent(rep), "the check ran no concurrent scenario:\n%s", rep)
	conc := story.Concurrent(rep)
	require.NotEmpty(t, conc, "no concurrent scenario caught the race:\n%s", rep)
	f := story.Find(rep, conc[0])
	require.Equal(t, []string{"customers", "reward_log"}, story.Tables(f), rep.String())
	require.Equal(t, "(id=77, name='Ann', points=220)", f.Database[0].Extra[0].String())
	require.Len(t, f.Database[1].Extra, 1, "a second reward_log row")

	twice.AssertIdempotent(t, loyalty.CheckThenActInTxJob(), twice.Isolation(twice.Serializable))
}

func TestLedgerIsIdempotent(t *testing.T) {
	t.Parallel()
	twice.AssertIdempotent(t, loyalty.LedgerJob())
}
