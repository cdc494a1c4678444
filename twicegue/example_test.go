package twicegue_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/vgarvardt/gue/v5"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twicegue"
)

var schema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE rewarded_orders (order_id bigint PRIMARY KEY);`)

var seed = twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`)

// rewardWork adds 50 points in the job's transaction, once per order.
func rewardWork(ctx context.Context, j *gue.Job) error {
	tag, err := j.Tx().Exec(ctx, `INSERT INTO rewarded_orders VALUES (9812) ON CONFLICT DO NOTHING`)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	_, err = j.Tx().Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
	return err
}

// rewardOnPool adds them on the pool, outside j.Tx().
func rewardOnPool(pool *pgxpool.Pool) gue.WorkFunc {
	return func(ctx context.Context, _ *gue.Job) error {
		_, err := pool.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = 77`)
		return err
	}
}

func rewardJob(wm func(a *twice.Attempt) gue.WorkMap) twicegue.Job {
	return twicegue.Job{Schema: schema, Seed: seed, Job: &gue.Job{Type: "reward", Args: []byte(`{}`)}, WorkMap: wm}
}

// The work in j.Tx() commits with gue's deletion of the job: every
// scenario passes.
func ExampleCheck() {
	rep := twicegue.Check(context.Background(), rewardJob(func(*twice.Attempt) gue.WorkMap {
		return gue.WorkMap{"reward": rewardWork}
	}))
	fmt.Println("idempotent:", rep.OK())
	// Output: idempotent: true
}

// Outside j.Tx(), a worker that dies before gue's commit leaves the points
// added and the job to another worker.
func ExampleAssertIdempotent() {
	tb := &recorder{name: "TestReward"}
	twicegue.AssertIdempotent(tb, rewardJob(func(a *twice.Attempt) gue.WorkMap {
		return gue.WorkMap{"reward": rewardOnPool(a.Pool)}
	}))
	fmt.Println("failed:", tb.failed)
	// Output: failed: true
}

// ExpectIdempotent lets the test go on.
func ExampleExpectIdempotent() {
	tb := &recorder{name: "TestReward"}
	ok := twicegue.ExpectIdempotent(tb, rewardJob(func(*twice.Attempt) gue.WorkMap {
		return gue.WorkMap{"reward": rewardWork}
	}))
	fmt.Println(ok)
	// Output: true
}

// Twice gives the job and gue's semantics to twice itself.
func ExampleJob_Twice() {
	job, opts := rewardJob(func(a *twice.Attempt) gue.WorkMap {
		return gue.WorkMap{"reward": rewardOnPool(a.Pool)}
	}).Twice()
	rep := twice.Check(context.Background(), job, append(opts, twice.Only("duplicate-enqueue"))...)
	fmt.Println(rep.OK(), rep.Tokens())
	// Output: false [duplicate-enqueue]
}

// Migrations is gue's table, for a schema of one's own.
func ExampleMigrations() {
	schema := pgfixture.Migrations(twicegue.Migrations(), pgfixture.SQL(`CREATE TABLE orders (id bigint PRIMARY KEY)`))
	fmt.Println(schema.Hash() != "")
	// Output: true
}

// recorder is a twice.TB that records whether it failed.
type recorder struct {
	name   string
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Name() string          { return r.name }
func (r *recorder) Logf(string, ...any)   {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
