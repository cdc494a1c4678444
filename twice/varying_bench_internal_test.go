package twice

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twicekit/twicekit/internal/compare"
	"github.com/twicekit/twicekit/pgfixture"
)

var shipJob = Job{
	Name:   "ship order 11",
	Schema: pgfixture.SQL(`CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL, shipped_at timestamptz);`),
	Seed:   SeedSQL(`INSERT INTO orders (id, status) VALUES (11, 'paid')`),
	Run: func(ctx context.Context, a *Attempt) error {
		_, err := a.Pool.Exec(ctx, `UPDATE orders SET status = 'shipped', shipped_at = now() WHERE id = 11 AND shipped_at IS NULL`)
		return err
	},
}

// BenchmarkSecondReference is the cost of finding the values that differ
// between two clean runs: a whole check (sequential scenarios only) of a
// job without such values (benchJob, 6 statements) and of one with
// (shipJob, a guarded now()), with one clean run (as before) and with two.
func BenchmarkSecondReference(b *testing.B) {
	ctx := context.Background()
	for _, job := range []Job{benchJob, shipJob} {
		for _, one := range []bool{true, false} {
			name := fmt.Sprintf("%s/one-reference=%v", job.Name, one)
			b.Run(name, func(b *testing.B) {
				opt := optionFunc(func(c *config) { c.OneReference = one })
				for b.Loop() {
					rep := Check(ctx, job, opt, WithoutConcurrency("measured apart"))
					// benchJob increments (so it is flagged either way); one
					// clean run flags shipJob's now(), two do not.
					if rep.Err != nil || job.Name == shipJob.Name && rep.OK() == one {
						b.Fatalf("unexpected verdict: %s", rep)
					}
				}
			})
		}
	}
}

// BenchmarkShapeCompare is the comparison alone, by shape and exactly, of
// a table of n rows each holding a varying uuid and a varying time.
func BenchmarkShapeCompare(b *testing.B) {
	for _, n := range []int{10, 1000} {
		run := func(seed int) *ScenarioRun {
			rows := make([]pgfixture.Row, n)
			for i := range rows {
				rows[i] = pgfixture.Row{Columns: []string{"id", "token", "at"},
					Values: []string{fmt.Sprint(i), fmt.Sprintf("%08x-0000-4000-8000-%012x", seed, i), fmt.Sprintf("2030-01-01T00:00:%02d.%06dZ", seed, i)}}
			}
			return &ScenarioRun{Snapshot: pgfixture.NewSnapshot(map[string][]pgfixture.Row{"t": rows})}
		}
		a, c := run(1), run(2)
		sh := compare.Detect(a.compared(), run(3).compared(), [2]time.Time{}, [2]time.Time{}, false).WithReference(a.compared(), nil)
		a.varying = sh
		b.Run(fmt.Sprintf("rows=%d/shape", n), func(b *testing.B) {
			for b.Loop() {
				if f := compareRun(a, c, newConfig(nil)); f != nil {
					b.Fatal("differs")
				}
			}
		})
		b.Run(fmt.Sprintf("rows=%d/exact", n), func(b *testing.B) {
			a.varying = nil
			for b.Loop() {
				pgfixture.Diff(a.Snapshot, c.Snapshot)
			}
			a.varying = sh
		})
	}
}

// BenchmarkSecondReferenceRun is the second clean run alone on a warm
// checker (reset, seed, one attempt, snapshot, and finding what differs),
// next to one clean scenario without the finding.
func BenchmarkSecondReferenceRun(b *testing.B) {
	ctx := context.Background()
	for _, job := range []Job{benchJob, shipJob} {
		c, err := newChecker(ctx, job, newConfig(nil))
		if err != nil {
			b.Fatal(err)
		}
		ref, err := c.scenario(ctx, Scenario{Kind: Once}, playArgs{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(job.Name+"/clean-run", func(b *testing.B) {
			for b.Loop() {
				if _, err := c.scenario(ctx, Scenario{Kind: Once}, playArgs{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(job.Name+"/second-reference", func(b *testing.B) {
			for b.Loop() {
				if err := c.secondReference(ctx, ref, &Report{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		_ = c.Close(ctx, false)
	}
}
