package rewards_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/twicekit/twicekit/twice"
)

// incrementPointsJob is the quick start's job changed as the README says:
// an increment, not idempotent.
func incrementPointsJob() twice.Job {
	job := rewardOrderJob(9812)
	job.Name = "increment points"
	job.Run = func(ctx context.Context, a *twice.Attempt) error {
		_, err := a.Pool.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
		return err
	}
	return job
}

// TestReadmeShowsTheReport keeps the README's sample failure true: the
// fenced block after <!-- README:report --> must be the report the broken
// variant of the quick start gets, byte for byte.
func TestReadmeShowsTheReport(t *testing.T) {
	rep := twice.Check(t.Context(), incrementPointsJob(), twice.TestName("TestRewardOrder"))
	if rep.OK() {
		t.Fatalf("the increment passed: %s", rep.String())
	}
	want := rep.String() + "\n"
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("no README.md at the module root: %v", err)
	}
	const marker = "<!-- README:report -->"
	_, after, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("README.md has no %s marker; put it before the sample report's fence. The report:\n%s", marker, want)
	}
	body, ok := strings.CutPrefix(strings.TrimLeft(after, "\n"), "```\n")
	if !ok {
		t.Fatalf("README.md: the line after %s must open a ``` fence", marker)
	}
	got, _, ok := strings.Cut(body, "```\n")
	if !ok {
		t.Fatalf("README.md: the fence after %s is not closed", marker)
	}
	if got != want {
		n := diffLine(got, want)
		t.Errorf("README.md's sample report differs from what the check prints, first at line %d:\n  README: %q\n  check:  %q\n\nthe block to paste:\n%s",
			n, lineAt(got, n), lineAt(want, n), want)
	}
}
