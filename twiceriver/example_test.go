package twiceriver_test

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceriver"
)

// A worker that adds the points, enqueues its follow-up job and completes
// itself in one transaction: every sequential and crash scenario passes.
func ExampleCheck() {
	rep := twiceriver.Check(context.Background(), twiceriver.Job[RewardArgs]{
		Schema: schema, Seed: seed, Args: RewardArgs{OrderID: 9812},
		Worker: func(a *twice.Attempt) river.Worker[RewardArgs] {
			return &RewardWorker{Pool: a.Pool, CompleteInTx: true}
		},
	})
	fmt.Println("idempotent:", rep.OK())
	// Output: idempotent: true
}

// Without JobCompleteTx, River completes the job after Work returns: a
// crash in between runs the increment again.
func ExampleAssertIdempotent() {
	tb := &recorder{name: "TestReward"}
	twiceriver.AssertIdempotent(tb, twiceriver.Job[RewardArgs]{
		Schema: schema, Seed: seed, Args: RewardArgs{OrderID: 9812},
		Worker: func(a *twice.Attempt) river.Worker[RewardArgs] { return &RewardWorker{Pool: a.Pool} },
	})
	fmt.Println("failed:", tb.failed)
	// Output: failed: true
}

// Twice gives the job and River's semantics to twice itself.
func ExampleJob_Twice() {
	job, opts := twiceriver.Job[RewardArgs]{
		Schema: schema, Seed: seed, Args: RewardArgs{OrderID: 9813},
		Worker: func(a *twice.Attempt) river.Worker[RewardArgs] { return &CancelWorker{Pool: a.Pool} },
	}.Twice()
	rep := twice.Check(context.Background(), job, append(opts, twice.Only("crash@end"))...)
	fmt.Println(rep.OK(), rep.Tokens())
	// Output: true [crash@end]
}

// ExpectIdempotent lets the test go on.
func ExampleExpectIdempotent() {
	tb := &recorder{name: "TestCancel"}
	ok := twiceriver.ExpectIdempotent(tb, twiceriver.Job[RewardArgs]{
		Schema: schema, Seed: seed, Args: RewardArgs{OrderID: 9813},
		Worker: func(a *twice.Attempt) river.Worker[RewardArgs] { return &CancelWorker{Pool: a.Pool} },
	})
	fmt.Println(ok)
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

// Config is the application's river.Config: its middleware runs around
// every Work, as in production.
func ExampleJob_config() {
	rep := twiceriver.Check(context.Background(), twiceriver.Job[RewardArgs]{
		Schema: guardedSchema, Seed: guardedSeed, Args: RewardArgs{OrderID: 9812},
		Config: &river.Config{Middleware: []rivertype.Middleware{&TenantMiddleware{}}},
		Worker: func(a *twice.Attempt) river.Worker[RewardArgs] { return &TenantWorker{Pool: a.Pool} },
	})
	fmt.Println("idempotent:", rep.OK())
	// Output: idempotent: true
}
