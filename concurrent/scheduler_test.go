package concurrent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/faults"
)

// play runs attempts that each pass points explicit points (no database)
// under the scheduler, and returns the order the points ran in.
func play(t testing.TB, ch concurrent.Chooser, points ...int) (*concurrent.Trace, []string) {
	s := concurrent.New(concurrent.Config{Attempts: len(points), Choose: ch})
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	start := func(i int) {
		ctx, run := faults.Start(context.Background(), concurrent.Letter(i), s.Plan(i))
		wg.Go(func() {
			defer s.Returned(i)
			defer run.Finish()
			for p := 1; p <= points[i]; p++ {
				if err := faults.Point(ctx, fmt.Sprint(p)); err != nil {
					return
				}
				mu.Lock()
				order = append(order, fmt.Sprintf("%s%d", concurrent.Letter(i), p))
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
		var e concurrent.Exhaustive
		seen := map[string]bool{}
		for {
			tr, _ := play(t, e.Next(), pts...)
			require.False(t, seen[tr.Token()], "%v: %s twice", pts, tr.Token())
			seen[tr.Token()] = true
			if !e.Record(tr) {
				break
			}
		}
		require.EqualValues(t, concurrent.Interleavings(pts...), len(seen), "%v", pts)
	}
}

func TestOverlapPausesTheFirstAttempt(t *testing.T) {
	tr, order := play(t, concurrent.Overlap{K: 2}, 4, 3)
	require.Equal(t, []string{"A1", "A2", "B1", "B2", "B3", "A3", "A4"}, order)
	require.Equal(t, "A2B3A2", tr.Token())
}

func TestPCTSamplesAreSeeded(t *testing.T) {
	distinct := map[string]bool{}
	for sample := range uint64(50) {
		a, _ := play(t, concurrent.NewPCT(7, sample, 2, 10, 3), 5, 5)
		b, _ := play(t, concurrent.NewPCT(7, sample, 2, 10, 3), 5, 5)
		require.Equal(t, a.Token(), b.Token())
		distinct[a.Token()] = true
	}
	require.Greater(t, len(distinct), 5, "PCT draws different schedules")
}

func TestExploreEnumeratesWhenItFits(t *testing.T) {
	var tokens []string
	n, err := concurrent.Explore(concurrent.Quick, 1, []int{2, 2}, func(ch concurrent.Chooser) (*concurrent.Trace, error) {
		tr, _ := play(t, ch, 2, 2)
		tokens = append(tokens, tr.Token())
		return tr, nil
	})
	require.NoError(t, err)
	require.Equal(t, 6, n)
	require.Equal(t, []string{"A2B2", "ABAB", "AB2A", "BA2B", "BABA", "B2A2"}, tokens)

	n, err = concurrent.Explore(concurrent.Quick, 1, []int{5, 5}, func(ch concurrent.Chooser) (*concurrent.Trace, error) {
		tr, _ := play(t, ch, 5, 5)
		if tr.Token() == "A5B5" {
			return tr, concurrent.Stop
		}
		return tr, nil
	})
	require.NoError(t, err)
	require.LessOrEqual(t, n, concurrent.Quick.Runs)
}

func TestStuckAttemptIsReported(t *testing.T) {
	s := concurrent.New(concurrent.Config{StuckAfter: 50e6})
	release := make(chan struct{})
	var wg sync.WaitGroup
	var runs [2]*faults.Run
	start := func(i int) {
		ctx, run := faults.Start(context.Background(), concurrent.Letter(i), s.Plan(i))
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
			_ = faults.Point(ctx, "one")
		})
	}
	_, err := s.Run(context.Background(), start)
	var stuck *concurrent.StuckError
	require.ErrorAs(t, err, &stuck)
	require.Equal(t, []int{1}, stuck.Stuck)
	require.EqualError(t, err, "concurrent: B stuck for 50ms: A waits for the scheduler before point 1 (point one); B is running before its first point: it reached no point, did not return and waits on no lock of another attempt")
	for _, r := range runs {
		r.Crash("stuck")
	}
	s.Stop()
	wg.Wait()
}

func mustParse(t *testing.T, token string) concurrent.Schedule {
	s, err := concurrent.ParseSchedule(token)
	require.NoError(t, err)
	return s
}

func TestTokens(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"AABBBA", "A2B3A"}, {"A2B3A1", "A2B3A"}, {"A", "A"}, {"BA10", "BA10"}, {"ABC", "ABC"},
	} {
		s, err := concurrent.ParseSchedule(c.in)
		require.NoError(t, err)
		require.Equal(t, c.out, s.Token())
	}
	for _, bad := range []string{"", "a", "A0", "2A", "A-1", "AB*"} {
		_, err := concurrent.ParseSchedule(bad)
		require.Error(t, err, bad)
	}
	require.EqualValues(t, 252, concurrent.Interleavings(5, 5))
	require.EqualValues(t, 1, concurrent.Interleavings(0, 0))
	require.EqualValues(t, 12, concurrent.Interleavings(2, 1, 1))
	require.Equal(t, concurrent.Sample, concurrent.Default.Choose(5, 5))
	require.Equal(t, concurrent.Enumerate, concurrent.Thorough.Choose(5, 5))
	b, err := concurrent.ParseBudget("thorough")
	require.NoError(t, err)
	require.Equal(t, concurrent.Thorough, b)
	_, err = concurrent.ParseBudget("huge")
	require.EqualError(t, err, `concurrent: unknown budget "huge": use one of quick, default, thorough`)
}

// BenchmarkScheduler is the scheduler's own cost: two attempts of five
// explicit points each (no database), one interleaving per op.
func BenchmarkScheduler(b *testing.B) {
	var e concurrent.Exhaustive
	for b.Loop() {
		tr, _ := play(b, e.Next(), 5, 5)
		if !e.Record(tr) {
			e = concurrent.Exhaustive{}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "interleavings/s")
}
