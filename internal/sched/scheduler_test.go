package sched_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sched"
)

// play runs attempts that each pass points explicit points (no database)
// under the scheduler, and returns the order the points ran in.
func play(t testing.TB, ch sched.Chooser, points ...int) (*sched.Trace, []string) {
	s := sched.New(sched.Config{Attempts: len(points), Choose: ch})
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	start := func(i int) {
		ctx, run := inject.Start(context.Background(), sched.Letter(i), s.Plan(i))
		wg.Go(func() {
			defer s.Returned(i)
			defer run.Finish()
			for p := 1; p <= points[i]; p++ {
				if err := inject.Point(ctx, fmt.Sprint(p)); err != nil {
					return
				}
				mu.Lock()
				order = append(order, fmt.Sprintf("%s%d", sched.Letter(i), p))
				mu.Unlock()
			}
		})
	}
	tr, err := s.Run(context.Background(), start)
	wg.Wait()
	require.NoError(t, err)
	return tr, order
}

func TestScheduleDecidesTheOrder(t *testing.T) {
	tr, order := play(t, mustParse(t, "AB2A"), 2, 2)
	require.Equal(t, []string{"A1", "B1", "B2", "A2"}, order)
	require.Equal(t, "AB2A", tr.Token())

	// Past the end of the schedule, and when the named attempt is done, the
	// first ready attempt goes.
	tr, order = play(t, mustParse(t, "B3"), 2, 2)
	require.Equal(t, []string{"B1", "B2", "A1", "A2"}, order)
	require.Equal(t, "B2A2", tr.Token())
}

func TestExhaustiveVisitsEveryInterleavingOnce(t *testing.T) {
	for _, pts := range [][]int{{1, 1}, {2, 2}, {3, 2}, {4, 4}, {2, 1, 1}} {
		var e sched.Exhaustive
		seen := map[string]bool{}
		for {
			tr, _ := play(t, e.Next(), pts...)
			require.False(t, seen[tr.Token()], "%v: %s twice", pts, tr.Token())
			seen[tr.Token()] = true
			if !e.Record(tr) {
				break
			}
		}
		require.EqualValues(t, sched.Interleavings(pts...), len(seen), "%v", pts)
	}
}

func TestOverlapPausesTheFirstAttempt(t *testing.T) {
	tr, order := play(t, sched.Overlap{K: 2}, 4, 3)
	require.Equal(t, []string{"A1", "A2", "B1", "B2", "B3", "A3", "A4"}, order)
	require.Equal(t, "A2B3A2", tr.Token())
}

func TestPCTSamplesAreSeeded(t *testing.T) {
	distinct := map[string]bool{}
	for sample := range uint64(50) {
		a, _ := play(t, sched.NewPCT(7, sample, 2, 10, 3), 5, 5)
		b, _ := play(t, sched.NewPCT(7, sample, 2, 10, 3), 5, 5)
		require.Equal(t, a.Token(), b.Token())
		distinct[a.Token()] = true
	}
	require.Greater(t, len(distinct), 5, "PCT draws different schedules")
}

func TestExploreEnumeratesWhenItFits(t *testing.T) {
	var tokens []string
	n, err := sched.Explore(quickBudget, 1, []int{2, 2}, func(ch sched.Chooser) (*sched.Trace, error) {
		tr, _ := play(t, ch, 2, 2)
		tokens = append(tokens, tr.Token())
		return tr, nil
	})
	require.NoError(t, err)
	require.Equal(t, 6, n)
	require.Equal(t, []string{"A2B2", "ABAB", "AB2A", "BA2B", "BABA", "B2A2"}, tokens)

	n, err = sched.Explore(quickBudget, 1, []int{5, 5}, func(ch sched.Chooser) (*sched.Trace, error) {
		tr, _ := play(t, ch, 5, 5)
		if tr.Token() == "A5B5" {
			return tr, sched.Stop
		}
		return tr, nil
	})
	require.NoError(t, err)
	require.LessOrEqual(t, n, quickBudget.Runs)
}

func TestStuckAttemptIsReported(t *testing.T) {
	s := sched.New(sched.Config{StuckAfter: 50e6})
	release := make(chan struct{})
	var wg sync.WaitGroup
	var runs [2]*inject.Run
	start := func(i int) {
		ctx, run := inject.Start(context.Background(), sched.Letter(i), s.Plan(i))
		runs[i] = run
		wg.Go(func() {
			defer s.Returned(i)
			defer run.Finish()
			if i == 1 {
				select { // stuck outside any point until crashed
				case <-release:
				case <-ctx.Done():
				}
			}
			_ = inject.Point(ctx, "one")
		})
	}
	_, err := s.Run(context.Background(), start)
	var stuck *sched.StuckError
	require.ErrorAs(t, err, &stuck)
	require.Equal(t, []int{1}, stuck.Stuck)
	require.EqualError(t, err, "concurrent: B stuck for 50ms: A waits for the scheduler before point 1 (point one); B is running before its first point: it reached no point, did not return and waits on no lock of another attempt")
	for _, r := range runs {
		r.Crash("stuck")
	}
	s.Stop()
	wg.Wait()
}

func mustParse(t *testing.T, token string) sched.Replay {
	s, err := sched.ParseSchedule(token)
	require.NoError(t, err)
	return s
}

func TestTokens(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"AABBBA", "A2B3A"}, {"A2B3A1", "A2B3A"}, {"A", "A"}, {"BA10", "BA10"}, {"ABC", "ABC"},
	} {
		s, err := sched.ParseSchedule(c.in)
		require.NoError(t, err)
		require.Equal(t, c.out, s.Token())
	}
	for _, bad := range []string{"", "a", "A0", "2A", "A-1", "AB*"} {
		_, err := sched.ParseSchedule(bad)
		require.Error(t, err, bad)
	}
	require.EqualValues(t, 252, sched.Interleavings(5, 5))
	require.EqualValues(t, 1, sched.Interleavings(0, 0))
	require.EqualValues(t, 12, sched.Interleavings(2, 1, 1))
	require.Equal(t, sched.Sample, defaultBudget.Choose(5, 5))
	require.Equal(t, sched.Enumerate, thoroughBudget.Choose(5, 5))
}

// BenchmarkScheduler is the scheduler's own cost: two attempts of five
// explicit points each (no database), one interleaving per op.
func BenchmarkScheduler(b *testing.B) {
	var e sched.Exhaustive
	for b.Loop() {
		tr, _ := play(b, e.Next(), 5, 5)
		if !e.Record(tr) {
			e = sched.Exhaustive{}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "interleavings/s")
}

// The budgets the engine's tests use; the named budgets users pick are
// twice.QuickBudget, twice.DefaultBudget and twice.ThoroughBudget.
var (
	quickBudget    = sched.Budget{Name: "quick", Runs: 20, Depth: 2}
	defaultBudget  = sched.Budget{Name: "default", Runs: 100, Depth: 3}
	thoroughBudget = sched.Budget{Name: "thorough", Runs: 1000, Depth: 3}
)
