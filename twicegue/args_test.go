package twicegue

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vgarvardt/gue/v5"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The jobs a work function enqueues are compared by their args as JSON: the
// wall clock's reading (gue_jobs.args.at) by shape, the order by value. The
// notification enqueued by every copy is flagged by the duplicate enqueue;
// the one enqueued with the reward alone passes.
func TestEnqueuedArgsCompareAsJSON(t *testing.T) {
	t.Parallel()
	notify := func(everyCopy bool) Job {
		return job(9812, func(a *twice.Attempt) gue.WorkMap {
			return gue.WorkMap{rewardType: rewardAndNotify(a.Pool, everyCopy)}
		})
	}
	rep := Check(t.Context(), notify(true))
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if got := fmt.Sprint(rep.Varying); got != "[gue_jobs.args.at]" {
		t.Errorf("varying: %s, want [gue_jobs.args.at]", got)
	}
	if got := fmt.Sprint(findings(rep)); got != "[duplicate-enqueue]" {
		t.Fatalf("flagged by %s, want [duplicate-enqueue]:\n%s", got, rep)
	}
	if diff := pgfixture.FormatDiff(rep.Findings[0].Database); !strings.Contains(diff, `args={"at":"‹time 1›","order_id":9812}`) {
		t.Errorf("the args are not printed as JSON with the time by shape:\n%s", diff)
	}
	if fixed := Check(t.Context(), notify(false)); !fixed.OK() {
		t.Errorf("the notification enqueued with the reward alone is flagged:\n%s", fixed)
	}
}
