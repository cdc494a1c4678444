package twice_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// A job writing now() under a guard is idempotent: the column differs
// between two clean runs, so twice compares it by shape. With ExactValues
// every scenario differs in it, and the report prints the times as
// placeholders.
func ExampleExactValues() {
	job := varyingJob("ship order 11", shipGuardedSQL)
	rep := twice.Check(context.Background(), job, twice.WithoutConcurrency("an example"))
	fmt.Println("by shape:", rep.OK(), rep.Varying)

	rep = twice.Check(context.Background(), job, twice.ExactValues(), twice.Only("sequential"))
	f := rep.Findings[0]
	fmt.Println(f.Database[0].Missing[0])
	fmt.Println(f.Database[0].Extra[0])
	// Output:
	// by shape: true [orders.shipped_at]
	// (id=11, status='shipped', shipped_at=‹time 1›, ship_count=0)
	// (id=11, status='shipped', shipped_at=‹time 2›, ship_count=0)
}

// A report's results are values: every scenario that ran with its verdict
// and its attempts, and every finding's problems by kind. This job fails
// whenever it is delivered again, so the queue gives up on it.
func ExampleScenarioRun() {
	job := loyaltyJob("fails when redelivered", failsEveryTime)
	rep := twice.Check(context.Background(), job, twice.Only("sequential"))
	for _, sr := range rep.Scenarios {
		fmt.Println(sr.Token(), sr.Verdict, len(sr.Attempts), "attempts")
		first, last := sr.Attempts[0], sr.Attempts[len(sr.Attempts)-1]
		fmt.Println(first.Name()+":", len(first.Points), "point,", first.End())
		fmt.Println(last.Name()+":", last.End(), "-", last.Err)
	}
	p := rep.Findings[0].Problems[0]
	fmt.Println(p.Kind, p.Attempt)
	// Output:
	// sequential broken 6 attempts
	// attempt 1 of job-1: 1 point, returned
	// attempt 6 of job-1: returned error - payment provider unavailable (delivery 6)
	// gave-up job-1
}

// Two scenarios at once, each on a database of its own: the report is the
// one the check writes playing them one after another, byte for byte.
func ExampleParallel() {
	job := loyaltyJob("increment", incrementPoints)
	serial := twice.Check(context.Background(), job, twice.WithoutConcurrency("an example"))
	parallel := twice.Check(context.Background(), job, twice.WithoutConcurrency("an example"), twice.Parallel(2))
	fmt.Println(parallel.String() == serial.String(), parallel.Tokens())
	// Output:
	// true [sequential crash@1 crash@end duplicate-enqueue]
}

// Three shards of one check, as three machines of a CI matrix play them:
// each plays the reference runs and its share of the other scenarios, and
// together they play every scenario once.
func ExampleShard() {
	job := loyaltyJob("ledger in a transaction", ledgerInTransaction)
	for k := 1; k <= 3; k++ {
		rep := twice.Check(context.Background(), job, twice.WithoutConcurrency("an example"), twice.Shard(k, 3))
		fmt.Println(k, rep.OK(), rep.Tokens())
	}
	// Output:
	// 1 true [crash@3 crash@end]
	// 2 true [duplicate-enqueue]
	// 3 true [sequential crash@1]
}

// A queue that never delivers one job ID twice at once still runs two
// copies of a duplicate enqueue at once: WithoutOverlappingDeliveries keeps
// those (duplicate-overlap@K) and says why the others are left out.
func ExampleWithoutOverlappingDeliveries() {
	job := twice.Job{Name: "grant bonus", Schema: loyaltySchema, Seed: loyaltySeed,
		Run: func(ctx context.Context, a *twice.Attempt) error {
			if _, err := a.Pool.Exec(ctx, `SELECT 1 FROM customers WHERE id = 77`); err != nil {
				return err
			}
			return ledgerCTE(ctx, a)
		}}
	rep := twice.Check(context.Background(), job,
		twice.WithoutOverlappingDeliveries("the queue locks a job's row while it runs"))
	fmt.Println(rep.OK(), slices.Contains(rep.Tokens(), "duplicate-overlap@1"))
	// Output: true true
}

// QueueTables names the queue's own tables: compared even when Schemas
// narrows the application's tables to another schema.
func ExampleQueueTables() {
	job := twice.Job{Name: "enqueue a mail", Schema: pgfixture.SQL(`CREATE SCHEMA app; CREATE TABLE app.orders (id int); CREATE TABLE jobs (kind text)`),
		Run: func(ctx context.Context, a *twice.Attempt) error {
			_, err := a.Pool.Exec(ctx, `INSERT INTO jobs VALUES ('mail')`)
			return err
		}}
	rep := twice.Check(context.Background(), job, twice.Schemas("app"), twice.QueueTables("jobs"))
	fmt.Println(rep.Reference.Snapshot.Tables(), rep.Findings[0].Token)
	// Output: [app.orders jobs] sequential
}

// A publisher with no retries of its own is recovered by its next scheduled
// run: declared Periodic, a crash is no give-up, and the payout keyed by
// the event is made once.
func ExamplePeriodic() {
	rep := twice.Check(context.Background(), outboxJob(true), twice.MaxDeliveries(1), twice.Periodic(time.Minute),
		twice.WithoutConcurrency("the scheduler starts the next run only after the last one ended"))
	fmt.Println(rep.OK(), rep.Reference.Attempts[1].JobID)
	// Output: true next-run
}

// A job run by a cron-like schedule (here every day at 03:00 UTC) plays its
// next run at the schedule's next time on the check's clock.
func ExamplePeriodicSchedule() {
	nightly := func(t time.Time) time.Time {
		n := time.Date(t.Year(), t.Month(), t.Day(), 3, 0, 0, 0, time.UTC)
		if !n.After(t) {
			n = n.AddDate(0, 0, 1)
		}
		return n
	}
	rep := twice.Check(context.Background(), outboxJob(true), twice.MaxDeliveries(1), twice.PeriodicSchedule(nightly),
		twice.WithoutConcurrency("the scheduler starts the next run only after the last one ended"))
	fmt.Println(rep.OK(), rep.Reference.Attempts[1].JobID)
	// Output: true next-run
}

// A job that leaves a temporary table on its session fails when its
// redelivery reuses the session; on a fresh session per delivery it passes,
// so that table was the cause.
func ExampleFreshSessionsPerDelivery() {
	job := twice.Job{Name: "scratch totals", Schema: loyaltySchema, Seed: loyaltySeed,
		Run: func(ctx context.Context, a *twice.Attempt) error {
			_, err := a.Pool.Exec(ctx, `CREATE TEMP TABLE scratch (n int); UPDATE customers SET points = 50 WHERE id = 77`)
			return err
		}}
	reused := twice.Check(context.Background(), job, twice.Only("sequential"), twice.MaxDeliveries(1))
	fresh := twice.Check(context.Background(), job, twice.Only("sequential"), twice.FreshSessionsPerDelivery())
	fmt.Println(reused.OK(), fresh.OK())
	// Output: false true
}
