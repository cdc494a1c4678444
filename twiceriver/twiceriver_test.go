package twiceriver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/riverqueue/river"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceriver"
)

// findings lists the tokens of the report's findings.
func findings(rep *twice.Report) []string {
	var t []string
	for _, f := range rep.Findings {
		t = append(t, f.Token)
	}
	return t
}

// deliveries lists, per scenario, how many attempts of each job ID ran
// ("sequential job-1:1").
func deliveries(rep *twice.Report) []string {
	var out []string
	add := func(token string, jobIDs []string) {
		n := map[string]int{}
		var ids, parts []string
		for _, id := range jobIDs {
			if n[id] == 0 {
				ids = append(ids, id)
			}
			n[id]++
		}
		for _, id := range ids {
			parts = append(parts, fmt.Sprintf("%s:%d", id, n[id]))
		}
		out = append(out, token+" "+strings.Join(parts, " "))
	}
	var ids []string
	for _, a := range rep.Reference.Attempts {
		if !a.NotDelivered {
			ids = append(ids, a.JobID)
		}
	}
	add(rep.Reference.Scenario.Token(), ids)
	for _, sr := range rep.Scenarios {
		ids = nil
		for _, a := range sr.Attempts {
			if !a.NotDelivered {
				ids = append(ids, a.JobID)
			}
		}
		add(sr.Scenario.Token(), ids)
	}
	return out
}

func check(t *testing.T, job twiceriver.Job[RewardArgs], opts ...twice.Option) *twice.Report {
	t.Helper()
	rep := twiceriver.Check(t.Context(), job, opts...)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	return rep
}

func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s:\n got: %q\nwant: %q", what, got, want)
	}
}

const noOverlaps = "\noverlapping deliveries of one job not checked (two copies of it at once are): River's rescuer runs a job again only after its timeout (1m0s) ran out and it has been running past RescueStuckJobsAfter (1h0m0s): the first run's context has ended by then, so River never runs it twice at once (the check assumes the worker keeps to the context River gives it)"

// The work is an increment, but the points, the follow-up job and the
// job's completion commit together: the completion is the ack, so River
// never runs a job again once its work committed. Every crash point plays
// (EveryCrashPoint: by default those that leave the same world as an
// earlier one are covered by it).
func TestTransactionalCompletionPassesEverySequentialAndCrashScenario(t *testing.T) {
	t.Parallel()
	rep := check(t, rewardJob(RewardWorker{CompleteInTx: true}), twice.EveryCrashPoint())
	equal(t, "report", rep.String(), "twice: reward_order: idempotent in 14 scenarios (sequential, crash@1, crash@2, crash@3, crash@4, crash@5, crash@6, crash@end, duplicate-enqueue, duplicate-overlap@1, duplicate-overlap@2, duplicate-overlap@3, duplicate-overlap@4, duplicate-overlap@5)"+noOverlaps)
	equal(t, "deliveries", deliveries(rep), []string{
		"once job-1:1",
		"sequential job-1:1", // the ack (the completion) had committed: no redelivery
		"crash@1 job-1:2", "crash@2 job-1:2", "crash@3 job-1:2", "crash@4 job-1:2", "crash@5 job-1:2", "crash@6 job-1:2",
		"crash@end job-1:1",
		"duplicate-enqueue job-1:1", // River skipped the second insert (UniqueOpts)
		// Both copies at once: River skipped the second insert again.
		"duplicate-overlap@1 job-1:1", "duplicate-overlap@2 job-1:1", "duplicate-overlap@3 job-1:1", "duplicate-overlap@4 job-1:1", "duplicate-overlap@5 job-1:1",
	})
}

// Without JobCompleteTx River completes the job after Work returns: a crash
// between the worker's commit and that completion runs the increment again.
func TestCompletionAfterWorkIsFlaggedByTheCrashBeforeRiverCompletes(t *testing.T) {
	t.Parallel()
	rep := check(t, rewardJob(RewardWorker{}))
	equal(t, "findings", findings(rep), []string{"sequential", "crash@end"})
	equal(t, "headline", rep.Findings[1].Headline, "not idempotent: crash after the last point (5 of 5): the worker's work had committed, then it died before River completed the job (it stayed running), and River's rescuer ran it again after its timeout and RescueStuckJobsAfter; complete the job in the work's transaction with river.JobCompleteTx")
	equal(t, "diff", pgfixture.FormatDiff(rep.Findings[1].Database), `customers:
  - (id=77, name='Ann', points=50)
  + (id=77, name='Ann', points=100)
river_job:
  + (state='available', max_attempts=25, priority=1, args={"order_id": 9812, "customer_id": 77}, kind='points_email', queue='default', tags={}, unique_key=NULL, unique_states=NULL)
`)
	equal(t, "sequential", rep.Findings[0].Headline, "not idempotent: sequential: Work returned, River's completion of the job was lost (it stayed running), and River's rescuer ran it again after its timeout and RescueStuckJobsAfter")
}

// The follow-up job inserted with client.Insert before the work's
// transaction is inserted again when a crash aborts that transaction.
func TestFollowUpOutsideTheTransactionIsDuplicated(t *testing.T) {
	t.Parallel()
	rep := check(t, rewardJob(RewardWorker{CompleteInTx: true, FollowUpOutside: true}))
	equal(t, "findings", findings(rep), []string{"crash@5", "crash@6", "crash@7", "crash@8"})
	for _, f := range rep.Findings {
		equal(t, f.Token, pgfixture.FormatDiff(f.Database), `river_job:
  + (state='available', max_attempts=25, priority=1, args={"order_id": 9812, "customer_id": 77}, kind='points_email', queue='default', tags={}, unique_key=NULL, unique_states=NULL)
`)
	}
	equal(t, "headline", rep.Findings[0].Headline, "not idempotent: crash before point 5 of 8 (begin); the job stayed running and River's rescuer ran it again after its timeout and RescueStuckJobsAfter")
}

// JobCancel ends the job: the clean run passes and River does not run it
// again (but when the cancellation itself is lost, as any completion).
func TestJobCancelOnTheCleanRunPassesAndIsNotRedelivered(t *testing.T) {
	t.Parallel()
	rep := check(t, twiceriver.Job[RewardArgs]{
		Schema: schema, Seed: seed, Args: RewardArgs{OrderID: 9813},
		Worker: func(a *twice.Attempt) river.Worker[RewardArgs] { return &CancelWorker{Pool: a.Pool} },
	})
	equal(t, "report", rep.String(), "twice: reward_order: idempotent in 5 scenarios (sequential, crash@1, crash@end, duplicate-enqueue, duplicate-overlap@1)"+noOverlaps)
	// At once, the second copy is a duplicate of a unique job still running,
	// and River skips its insert; one after the other, the first was
	// cancelled and no longer counts.
	equal(t, "deliveries", deliveries(rep), []string{
		"once job-1:1", "sequential job-1:2", "crash@1 job-1:2", "crash@end job-1:2", "duplicate-enqueue job-1:1 job-2:1", "duplicate-overlap@1 job-1:1",
	})
	first := rep.Reference.Attempts[0]
	equal(t, "reference", []any{first.Err, first.Terminal}, []any{"JobCancelError: order 9813 was cancelled", true})
}

// River's rescuer never runs again a job whose worker has no timeout
// (Timeout -1): a crash leaves it running, and its work is lost. The same
// worker with a timeout passes
// (TestTransactionalCompletionPassesEverySequentialAndCrashScenario).
func TestWorkerWithoutTimeoutLosesItsWorkAfterACrash(t *testing.T) {
	t.Parallel()
	job := rewardJob(RewardWorker{CompleteInTx: true})
	job.Worker = func(a *twice.Attempt) river.Worker[RewardArgs] {
		return &UnboundedRewardWorker{RewardWorker{Pool: a.Pool, CompleteInTx: true}}
	}
	rep := check(t, job)
	equal(t, "findings", findings(rep), []string{"crash@1", "crash@2", "crash@3", "crash@4", "crash@5", "crash@6"})
	equal(t, "headline", rep.Findings[0].Headline, "not idempotent: crash before point 1 of 6 (begin); the job stayed running and River's rescuer never runs again a job whose worker has no timeout (Timeout -1): its work is lost")
	equal(t, "deliveries", deliveries(rep)[2], "crash@1 job-1:1")
}
