package twiceriver_test

import (
	"testing"

	"github.com/twicekit/twicekit/internal/headlinecheck"
)

// TestHeadlinesAgreeWithTheirTimelines: every headline of a flagged River
// worker says what its timeline shows (River's rescuer runs it again only
// where the timeline has a second delivery).
func TestHeadlinesAgreeWithTheirTimelines(t *testing.T) {
	t.Parallel()
	rep := check(t, rewardJob(RewardWorker{}))
	if rep.OK() {
		t.Fatal("completion after the work passed")
	}
	headlinecheck.Agree(t, rep)
}
