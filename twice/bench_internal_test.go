package twice

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/pgfixture"
)

var benchSchema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, name text NOT NULL, points int NOT NULL DEFAULT 0);
CREATE TABLE points_ledger (id bigserial PRIMARY KEY, customer_id bigint NOT NULL, order_id bigint NOT NULL,
  reason text NOT NULL, points int NOT NULL, UNIQUE (order_id, reason));
CREATE TABLE processed_jobs (job_id text PRIMARY KEY);`)

// sixStatements is a 6-statement job: BEGIN, SELECT, INSERT, UPDATE, INSERT, COMMIT.
func sixStatements(ctx context.Context, q interface {
	Begin(context.Context) (pgx.Tx, error)
}, jobID string) error {
	return pgx.BeginFunc(ctx, q, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM points_ledger WHERE order_id = 9812`).Scan(&n); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO points_ledger (customer_id, order_id, reason, points) VALUES (77, 9812, 'order_reward', 50) ON CONFLICT DO NOTHING`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO processed_jobs (job_id) VALUES ($1) ON CONFLICT DO NOTHING`, jobID)
		return err
	})
}

var benchJob = Job{
	Name:   "six statements",
	Schema: benchSchema,
	Seed:   SeedSQL(`INSERT INTO customers (id, name) VALUES (77, 'Ann')`),
	Run: func(ctx context.Context, a *Attempt) error {
		return sixStatements(ctx, a.Pool, a.JobID)
	},
}

// BenchmarkScenario compares one scenario of the harness (reset to the
// seeded state, one traced attempt of a 6-statement job, snapshot) with the
// same work done bare (the same reset, the same statements on an untraced
// pool, snapshot).
func BenchmarkScenario(b *testing.B) {
	ctx := context.Background()
	c, err := newChecker(ctx, benchJob, newConfig(nil))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.Close(ctx, false) }()

	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if err := c.ResetSeeded(ctx); err != nil {
				b.Fatal(err)
			}
			if err := sixStatements(ctx, c.DB.Pool(), "job-1"); err != nil {
				b.Fatal(err)
			}
			if _, err := c.DB.Snapshot(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("harness", func(b *testing.B) {
		for b.Loop() {
			sr, err := c.scenario(ctx, Scenario{Kind: Once}, playArgs{})
			if err != nil {
				b.Fatal(err)
			}
			if a := sr.Attempts[0]; len(a.Points) != 6 || a.Err != nil {
				b.Fatalf("want a clean 6-point attempt, got %d points, err %v", len(a.Points), a.Err)
			}
		}
	})
	b.Run("harness-crash", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.scenario(ctx, Scenario{Kind: CrashBefore, Point: 4, Of: 6}, playArgs{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
