package twice_test

import (
	"context"
	"fmt"

	"github.com/twicekit/twicekit/twice"
)

// A deposit guarded by its job ID, whose error path records a failure and
// acks: when the reply of its COMMIT is lost, the deposit happened and a
// failure is recorded too.
func ExampleLoseStatementReplies() {
	job := twice.Job{Name: "deposit", Schema: depositSchema, Seed: depositSeed, Run: deposit(recordAndAck)}
	rep := twice.Check(context.Background(), job, twice.LoseStatementReplies(), twice.WithoutConcurrency("this example shows the lost replies"))
	for _, f := range rep.Findings {
		fmt.Println(f.Headline)
	}
	// Output:
	// not idempotent: reply lost at point 4 of 4 (commit): PostgreSQL applied and committed it, but the job saw a connection error
}
