package riverjobs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/internal/storytest"
	"github.com/twicekit/twicekit/examples/riverjobs"
	"github.com/twicekit/twicekit/pgfixture"
)

// Every form says what the story expects of it (the tour's verdict).
func TestForms(t *testing.T) {
	t.Parallel()
	for _, f := range riverjobs.Forms() {
		t.Run(f.Name, func(t *testing.T) {
			rep := storytest.Check(t, f.Job, f.Options...)
			ok, verdict := story.Verdict(f, rep)
			require.True(t, ok, "%s\n%s", verdict, rep)
		})
	}
}

func form(t *testing.T, name string) story.Form {
	for _, f := range riverjobs.Forms() {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no form %q", name)
	return story.Form{}
}

func TestRewardCompletedAfterWorkGivesThePointsAgain(t *testing.T) {
	t.Parallel()
	f := form(t, "reward-completed-after-work")
	rep := storytest.Check(t, f.Job, f.Options...)
	require.Equal(t, []string{"sequential", "crash@end"}, story.Sequential(rep), rep.String())
	fd := story.Find(rep, "crash@end")
	require.Equal(t, "not idempotent: crash after the last point (6 of 6): the worker's work had committed, then it died before River completed the job (it stayed running), and River's rescuer ran it again after its timeout and RescueStuckJobsAfter; complete the job in the work's transaction with river.JobCompleteTx", fd.Headline)
	require.Equal(t, `customers:
  - (id=77, name='Ann', points=170)
  + (id=77, name='Ann', points=220)
river_job:
  + (state='available', max_attempts=25, priority=1, args={"order_id": 9812, "customer_id": 77}, kind='points_email', queue='default', tags={}, unique_key=NULL, unique_states=NULL)
`, pgfixture.FormatDiff(fd.Database))
}

func TestRewardFollowUpOutsideTheTransactionIsInsertedTwice(t *testing.T) {
	t.Parallel()
	f := form(t, "reward-follow-up-outside-tx")
	rep := storytest.Check(t, f.Job, f.Options...)
	require.Equal(t, []string{"crash@6", "crash@7", "crash@8", "crash@9"}, story.Sequential(rep), rep.String())
	for _, tok := range story.Sequential(rep) {
		require.Equal(t, `river_job:
  + (state='available', max_attempts=25, priority=1, args={"order_id": 9812, "customer_id": 77}, kind='points_email', queue='default', tags={}, unique_key=NULL, unique_states=NULL)
`, pgfixture.FormatDiff(story.Find(rep, tok).Database), tok)
	}
}

func TestInvoiceUnguardedSendsAgain(t *testing.T) {
	t.Parallel()
	f := form(t, "invoice-unguarded")
	rep := storytest.Check(t, f.Job, f.Options...)
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue", "crash-after@5", "reply-lost@5"}, story.Sequential(rep), rep.String())
	fd := story.Find(rep, "sequential")
	require.Len(t, fd.Effects, 1)
	require.Equal(t, "not idempotent: sequential: Work returned, River's completion of the job was lost (it stayed running), and River's rescuer ran it again after its timeout and RescueStuckJobsAfter", fd.Headline)
}

func TestPassingForms(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"reward-complete-tx", "invoice-guarded-complete-tx", "invoice-missing-cancelled"} {
		f := form(t, name)
		rep := storytest.Check(t, f.Job, f.Options...)
		require.True(t, rep.OK(), "%s: %s", name, rep)
	}
}
