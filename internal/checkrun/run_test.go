package checkrun

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/crashstates"
	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/internal/scenarios"
	"github.com/twicekit/twicekit/internal/shard"
	"github.com/twicekit/twicekit/internal/wall"
)

type lane struct{}

type run struct {
	token string
	hung  bool
}

type finding struct{ token string }

// fakeCheck is a check whose plan is plan, whose scenarios hang or break as
// hung and broken say, recording what it added in added.
func fakeCheck(plan []scenarios.Scenario, hung, broken map[string]bool, added *[]string) Check[lane, run, finding] {
	return Check[lane, run, finding]{
		Job:              "job",
		Only:             "",
		Picked:           true, // no wall budget
		Parallel:         1,
		Shard:            shard.Shard{K: 1, N: 1},
		Started:          time.Now(),
		ConcurrentMayRun: true,

		WorldPrints:   func() *crashstates.Prints { return nil },
		ClearSessions: func() {},
		StartLanes: func(n int) func() ([]lane, string, error) {
			return func() ([]lane, string, error) { return []lane{{}}, "", nil }
		},
		Reference: func(func(context.Context, faults.Step) error) error { return nil },
		Judge:     func() (bool, error) { return true, nil },
		Plan:      func() ([]scenarios.Scenario, error) { return plan, nil },
		WallBudget: func() (time.Duration, error) {
			return 0, nil
		},
		SetWall: func(*wall.Clock) {},
		Play: func(_ lane, s scenarios.Scenario) (*run, error) {
			return &run{token: s.Token(), hung: hung[s.Token()]}, nil
		},
		Compare: func(r *run) *finding {
			if broken[r.token] {
				return &finding{r.token}
			}
			return nil
		},
		Hung:           func(r *run) bool { return r.hung },
		PlayConcurrent: func([]lane) ([]*run, error) { return []*run{{token: "overlap@1"}}, nil },
		Sequential:     func([]lane) {},
		Add: func(r *run, f *finding) {
			s := r.token
			if f != nil {
				s += " broken"
			}
			*added = append(*added, s)
		},
	}
}

var threeScenarios = []scenarios.Scenario{
	{Kind: scenarios.AckLost},
	{Kind: scenarios.CrashBefore, Point: 1},
	{Kind: scenarios.CrashAfterLast},
}

// TestTheResultsFoldInPlanOrderThenTheConcurrentOnes: every sequential
// scenario is added in plan order with its finding, then the concurrent
// ones.
func TestTheResultsFoldInPlanOrderThenTheConcurrentOnes(t *testing.T) {
	var added []string
	out := fakeCheck(threeScenarios, nil, map[string]bool{"crash@1": true}, &added).Run()
	require.NoError(t, out.Err)
	require.Equal(t, []string{"sequential", "crash@1 broken", "crash@end", "overlap@1"}, added)
	require.Empty(t, out.StoppedEarly)
	require.Equal(t, 1, out.Lanes)
}

// TestAHungScenarioStopsTheRest: the first hung scenario ends the fold; the
// report says what was left out, the concurrent scenarios included.
func TestAHungScenarioStopsTheRest(t *testing.T) {
	var added []string
	out := fakeCheck(threeScenarios, map[string]bool{"sequential": true}, nil, &added).Run()
	require.NoError(t, out.Err)
	require.Equal(t, []string{"sequential"}, added)
	require.Equal(t, "not run after the hang in sequential: 2 more scenarios and the concurrent ones (each would wait out AttemptTimeout the same way; fix the hang, then check again)", out.StoppedEarly)
}

// TestABrokenReferenceEndsTheRun: a reference run that broke a promise is
// the run's only outcome; an error of the reference is the check's.
func TestABrokenReferenceEndsTheRun(t *testing.T) {
	var added []string
	k := fakeCheck(threeScenarios, nil, nil, &added)
	k.Judge = func() (bool, error) { return false, nil }
	out := k.Run()
	require.NoError(t, out.Err)
	require.Empty(t, added)

	boom := errors.New("boom")
	k.Reference = func(func(context.Context, faults.Step) error) error { return boom }
	require.ErrorIs(t, k.Run().Err, boom)
}

func TestStoppedAfterHangCountsWhatIsLeft(t *testing.T) {
	require.Contains(t, report.StoppedAfterHangText("crash@2", 1, false), ": 1 more scenario (")
	require.Contains(t, report.StoppedAfterHangText("crash@2", 0, true), ": the concurrent scenarios (")
}

func TestAKeptDatabaseNoteNamesTheMode(t *testing.T) {
	require.Empty(t, KeptNote("external"))
	require.Contains(t, KeptNote("local"), "in local mode the cluster is removed when the binary ends")
}
