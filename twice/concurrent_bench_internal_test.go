package twice

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/internal/sched"
	"github.com/twicekit/twicekit/pgfixture"
)

var interleavingsSchema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE points_ledger (id bigserial PRIMARY KEY, customer_id bigint NOT NULL, order_id bigint NOT NULL,
  reason text NOT NULL, points int NOT NULL, UNIQUE (order_id, reason));`)

// fivePoints is check-then-act with the unique constraint, five points:
// BEGIN, SELECT, UPDATE, INSERT, COMMIT (the racing loser fails on the unique
// violation and rolls back).
var fivePoints = Job{
	Name:   "five points",
	Schema: interleavingsSchema,
	Seed:   SeedSQL(`INSERT INTO customers (id) VALUES (77)`),
	Run: func(ctx context.Context, a *Attempt) error {
		return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
			var done bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM points_ledger WHERE order_id = 9812)`).Scan(&done); err != nil || done {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO points_ledger (customer_id, order_id, reason, points) VALUES (77, 9812, 'order_reward', 50)`)
			return err
		})
	},
}

// BenchmarkInterleavings plays the interleavings of two attempts of a
// 5-point job, each a whole concurrent scenario: reset, seed, both attempts
// under the lock-aware scheduler, the losers' redeliveries, snapshot. It
// walks every distinct interleaving in turn (C(10,5) = 252 schedules, fewer
// distinct ones because lock waits rule some out) and reports
// interleavings/s.
func BenchmarkInterleavings(b *testing.B) {
	ctx := context.Background()
	c, err := newChecker(ctx, fivePoints, newConfig(nil))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.Close(ctx, false) }()
	var e sched.Exhaustive
	distinct := 0
	for b.Loop() {
		sr, err := c.playScenario(ctx, Scenario{Kind: Interleaved, Of: 5}, e.Next())
		if err != nil {
			b.Fatal(err)
		}
		if len(sr.Problems) > 0 {
			b.Fatalf("%s: %v", sr.Scenario.Token(), sr.Problems)
		}
		if e.Record(sr.interleaving.trace) {
			distinct++
		} else {
			distinct++
			e = sched.Exhaustive{}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "interleavings/s")
}
