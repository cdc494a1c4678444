package twicegue

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vgarvardt/gue/v5"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/twice"
)

func findings(rep *twice.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Token)
	}
	return out
}

func job(orderID int64, wm func(a *twice.Attempt) gue.WorkMap) Job {
	return Job{Schema: schema, Seed: seed, Job: &gue.Job{Type: rewardType, Args: args(orderID)}, WorkMap: wm}
}

func inTx(wf gue.WorkFunc) func(*twice.Attempt) gue.WorkMap {
	return func(*twice.Attempt) gue.WorkMap { return gue.WorkMap{rewardType: wf} }
}

// Work in j.Tx() commits with gue's deletion of the job: every scenario
// passes but the duplicate enqueue (gue has no uniqueness).
func TestWorkInTheJobsTransactionPassesAllButADuplicateEnqueue(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, inTx(rewardInTx)))
	if got := fmt.Sprint(findings(rep)); got != "[duplicate-enqueue]" || rep.Err != nil {
		t.Fatalf("flagged by %s, want [duplicate-enqueue]:\n%s", got, rep)
	}
	if !strings.Contains(rep.String(), "gue has no uniqueness of its own") {
		t.Errorf("the headline is not in gue's words:\n%s", rep)
	}
}

// Keyed on the order in the same transaction, it passes everything.
func TestKeyedOnTheOrderPasses(t *testing.T) {
	t.Parallel()
	AssertIdempotent(t, job(9812, inTx(rewardOncePerOrder)))
}

// The same work on the pool, outside j.Tx(): a crash before gue's commit
// runs it again.
func TestWorkOutsideTheJobsTransactionIsFlagged(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, func(a *twice.Attempt) gue.WorkMap {
		return gue.WorkMap{rewardType: rewardOnPool(a.Pool)}
	}), twice.WithoutDuplicateEnqueue("one gue job per order, enqueued with the order"))
	if rep.Err != nil || rep.OK() {
		t.Fatalf("work outside j.Tx() passed:\n%s", rep)
	}
	for _, tok := range findings(rep) {
		if !strings.HasPrefix(tok, "crash@") || tok == "crash@end" {
			t.Errorf("flagged by %s: want only crashes before gue's commit:\n%s", tok, rep)
		}
	}
	if !strings.Contains(rep.String(), "another worker locked it again") {
		t.Errorf("the headline is not in gue's words:\n%s", rep)
	}
}

// gue.ErrDiscardJob on the clean run deletes the job: it passes, worked once.
func TestDiscardEndsTheJob(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9813, inTx(rewardOncePerOrder)))
	if !rep.OK() || len(rep.Reference.Attempts) != 1 {
		t.Fatalf("a discarded job was not an end:\n%s", rep)
	}
}

// A job without its parts gets an error that says what to set.
func TestMissingPartsSayWhatToSet(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		job  Job
		want string
	}{
		{Job{Schema: schema, WorkMap: inTx(rewardInTx)}, "set Job.Job"},
		{Job{Schema: schema, Job: &gue.Job{Type: rewardType, Args: args(9812)}}, "set Job.WorkMap"},
		{Job{Schema: schema, Job: &gue.Job{Type: "other", Args: args(9812)}, WorkMap: inTx(rewardInTx)}, `no work function for the job's type "other"`},
	} {
		rep := Check(t.Context(), c.job)
		if rep.OK() || !strings.Contains(rep.String(), c.want) {
			t.Errorf("want a report saying %q, got:\n%s", c.want, rep)
		}
	}
}

// TestMigrationsAreGues compares the embedded copy of gue's schema with
// the file of the gue module go.mod pins.
func TestMigrationsAreGues(t *testing.T) {
	t.Parallel()
	out, err := exec.CommandContext(context.Background(), "go", "list", "-m", "-f", "{{.Dir}}", "github.com/vgarvardt/gue/v5").Output()
	if err != nil {
		t.Skipf("go list cannot find gue's module directory: %v", err)
	}
	want, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "migrations", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := migrations.ReadFile("migrations/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("twicegue/migrations/schema.sql differs from gue's; copy gue's migrations/schema.sql:\n%s", want)
	}
}

// gue.ErrRescheduleJobIn is "later", not a failure: the queue's note says
// so. (twice asks the clean run to succeed on its first delivery, so a job
// that reschedules there is reported as failing its clean run.)
func TestRescheduleIsLater(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, inTx(rescheduleOnce(rewardOncePerOrder))))
	if rep.Reference == nil || len(rep.Reference.Attempts) == 0 || !strings.Contains(rep.Reference.Attempts[0].Note, "snoozed") {
		t.Fatalf("the rescheduled delivery is not noted as snoozed:\n%s", rep)
	}
	if !isReschedule(gue.ErrRescheduleJobIn(0, "x")) || isReschedule(gue.ErrDiscardJob("x")) || isReschedule(fmt.Errorf("wrapped: %w", gue.ErrRescheduleJobIn(0, "x"))) {
		t.Fatal("isReschedule does not tell gue's reschedules as gue does (unwrapped, discards apart)")
	}
}

// notifyAfter adds the points in j.Tx(), then tells the CRM; keyed, it
// records the order first in the same transaction and does nothing for an
// order it has seen.
func notifyAfter(keyed bool) func(a *twice.Attempt) gue.WorkMap {
	return func(a *twice.Attempt) gue.WorkMap {
		return gue.WorkMap{rewardType: func(ctx context.Context, j *gue.Job) error {
			if keyed {
				tag, err := j.Tx().Exec(ctx, `INSERT INTO rewarded_orders VALUES (9812) ON CONFLICT DO NOTHING`)
				if err != nil || tag.RowsAffected() == 0 {
					return err
				}
			}
			if _, err := j.Tx().Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`); err != nil {
				return err
			}
			return a.Webhooks.Post(ctx, "https://crm.example/points", []byte(`{"customer":77,"points":50}`))
		}}
	}
}

// gue's j.Error commits j.Tx(): when the CRM call fails after the points
// were added in j.Tx() (its reply lost), the points commit with the error
// and the retry adds them again. Keyed on the order in the same
// transaction, it passes.
func TestAnErrorCommitsTheWorkInJTx(t *testing.T) {
	t.Parallel()
	crm := twice.EffectPolicy("webhook", effects.AtLeastOnce)
	rep := Check(t.Context(), job(9812, notifyAfter(false)), crm, twice.WithoutDuplicateEnqueue("not this test"))
	got := fmt.Sprint(findings(rep))
	if rep.Err != nil || !strings.Contains(got, "reply-lost@") {
		t.Fatalf("flagged by %s, want reply-lost:\n%s", got, rep)
	}
	AssertIdempotent(t, job(9812, notifyAfter(true)), crm)
}
