package twice_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twicekit/twicekit/twice"
)

// guardedStatements is a job of n statements, each guarded by the ledger's
// unique key and committed on its own: idempotent, and every point leaves
// another world behind (no crash state repeats).
func guardedStatements(n int) twice.Job {
	job := loyaltyJob(fmt.Sprintf("%d guarded statements", n), func(ctx context.Context, a *twice.Attempt) error {
		for i := 1; i <= n; i++ {
			if _, err := a.Pool.Exec(ctx, `INSERT INTO points_ledger (customer_id, order_id, reason, points)
VALUES (77, $1, 'long job', 1) ON CONFLICT (order_id, reason) DO NOTHING`, i); err != nil {
				return err
			}
		}
		return nil
	})
	return job
}

// BenchmarkLongJob is one whole check of a job of 10, 30, 100 and 300
// guarded statements under the quick and default budgets (quick is what
// -short uses); scenarios/op is how many scenarios the check ran.
func BenchmarkLongJob(b *testing.B) {
	for _, budget := range []twice.Budget{twice.QuickBudget, twice.DefaultBudget} {
		for _, n := range []int{10, 30, 100, 300} {
			b.Run(fmt.Sprintf("budget=%s/points=%d", budget.Name, n), func(b *testing.B) {
				job := guardedStatements(n)
				var scenarios int
				for b.Loop() {
					rep := twice.Check(context.Background(), job, twice.WithBudget(budget))
					if !rep.OK() {
						b.Fatal(rep.String())
					}
					scenarios = len(rep.Scenarios)
				}
				b.ReportMetric(float64(scenarios), "scenarios/op")
			})
		}
	}
}

// BenchmarkBadJob is one whole check of a job that hangs when redelivered
// (AttemptTimeout 1 s: the check costs about one timeout, however many
// scenarios the job has) and of a job that calls FailNow inside Run (found
// in the reference run, at once).
func BenchmarkBadJob(b *testing.B) {
	cases := []struct {
		name string
		job  twice.Job
		opts []twice.Option
	}{
		{"hangs-on-redelivery/timeout=1s", loyaltyJob("hangs when redelivered", hangsOnRedelivery), []twice.Option{twice.AttemptTimeout(time.Second)}},
		{"failnow-in-run", loyaltyJob("require in Run", requireInRun), nil},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if rep := twice.Check(context.Background(), c.job, c.opts...); rep.OK() || rep.Err != nil {
					b.Fatalf("want a finding, got: %s", rep.String())
				}
			}
		})
	}
}

// BenchmarkParallelScenarios is the thorough check of a long job (60
// guarded statements) one scenario at a time and -twice.parallel=2, each
// lane on its own database. sequential: the concurrent scenarios off, so
// every crash point and the other sequential scenarios (63, none covered by
// another). all: with the concurrent ones too (overlaps and PCT samples:
// 422 scenarios); a parallel check plays those on every lane as well.
func BenchmarkParallelScenarios(b *testing.B) {
	job := guardedStatements(60)
	for _, what := range []string{"sequential", "all"} {
		for _, n := range []int{1, 2} {
			b.Run(fmt.Sprintf("scenarios=%s/parallel=%d", what, n), func(b *testing.B) {
				opts := []twice.Option{twice.WithBudget(twice.ThoroughBudget), twice.Parallel(n)}
				if what == "sequential" {
					opts = append(opts, twice.WithoutConcurrency("measured apart"))
				}
				// Untimed: the server, the template and warm databases for
				// every lane, as a test binary has them after its first check.
				twice.Check(context.Background(), job, twice.Parallel(n), twice.Only("sequential"))
				var scenarios int
				for b.Loop() {
					rep := twice.Check(context.Background(), job, opts...)
					if !rep.OK() || twice.LanesOf(rep) != n {
						b.Fatalf("want a passing check on %d databases, got %d:\n%s", n, twice.LanesOf(rep), rep.String())
					}
					scenarios = len(rep.Scenarios)
				}
				b.ReportMetric(float64(scenarios), "scenarios/op")
			})
		}
	}
}

// BenchmarkShards is the same thorough check whole and as each of 4
// shards (what one machine of a CI matrix of 4 plays): every shard repeats
// the two reference runs and plays its share of the other scenarios.
// sequential: the concurrent scenarios off; all: with them, and they play
// together in one shard.
func BenchmarkShards(b *testing.B) {
	job := guardedStatements(60)
	for _, what := range []string{"sequential", "all"} {
		for k := 0; k <= 4; k++ {
			opts := []twice.Option{twice.WithBudget(twice.ThoroughBudget)}
			if what == "sequential" {
				opts = append(opts, twice.WithoutConcurrency("measured apart"))
			}
			name := fmt.Sprintf("scenarios=%s/whole", what)
			if k > 0 {
				name = fmt.Sprintf("scenarios=%s/shard=%d-of-4", what, k)
				opts = append(opts, twice.Shard(k, 4))
			}
			b.Run(name, func(b *testing.B) {
				twice.Check(context.Background(), job, twice.Only("sequential")) // untimed: the server, the template, a warm database
				var scenarios int
				for b.Loop() {
					rep := twice.Check(context.Background(), job, opts...)
					if !rep.OK() {
						b.Fatal(rep.String())
					}
					scenarios = len(rep.Scenarios)
				}
				b.ReportMetric(float64(scenarios), "scenarios/op")
			})
		}
	}
}
