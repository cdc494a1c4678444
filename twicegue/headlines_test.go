package twicegue

import (
	"testing"

	"github.com/vgarvardt/gue/v5"

	"github.com/twicekit/twicekit/internal/headlinecheck"
	"github.com/twicekit/twicekit/twice"
)

// TestHeadlinesAgreeWithTheirTimelines: every headline of a flagged gue
// work function says what its timeline shows.
func TestHeadlinesAgreeWithTheirTimelines(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, func(a *twice.Attempt) gue.WorkMap {
		return gue.WorkMap{rewardType: rewardOnPool(a.Pool)}
	}))
	if rep.Err != nil || rep.OK() {
		t.Fatalf("work outside j.Tx() passed or failed to run:\n%s", rep)
	}
	headlinecheck.Agree(t, rep)
}
