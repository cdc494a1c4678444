package twicetemporal_test

import (
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/twicekit/twicekit/internal/headlinecheck"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twicetemporal"
)

// TestHeadlinesAgreeWithTheirTimelines: with retries (the default policy)
// the headlines name Temporal's retry and the timelines show it; with
// MaximumAttempts 1 no headline says Temporal retried anything.
func TestHeadlinesAgreeWithTheirTimelines(t *testing.T) {
	t.Parallel()
	unkeyed := func(opts workflow.ActivityOptions) twicetemporal.Activity {
		return twicetemporal.Activity{Schema: schema, Seed: seed, Args: []any{1}, Options: opts,
			Activity: func(a *twice.Attempt) any { return (&Counter{Pool: a.Pool}).Add }}
	}
	rep := check(t, unkeyed(workflow.ActivityOptions{}))
	if rep.OK() {
		t.Fatal("an unkeyed increment passed")
	}
	headlinecheck.Agree(t, rep)
	if h := headlines(rep); !strings.Contains(h, "Temporal retried it") {
		t.Errorf("with retries, no headline names Temporal's retry:\n%s", h)
	}

	once := unkeyed(workflow.ActivityOptions{RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	rep = check(t, once, twice.Only("crash@end"))
	if rep.OK() {
		t.Fatal("a crash with no retry passed")
	}
	headlinecheck.Agree(t, rep)
	h := headlines(rep)
	if strings.Contains(h, "Temporal retried it") || !strings.Contains(h, "Temporal did not retry it: its RetryPolicy's MaximumAttempts was reached") {
		t.Errorf("with MaximumAttempts 1 the headline must say Temporal did not retry:\n%s", h)
	}
}
