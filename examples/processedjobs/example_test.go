package processedjobs_test

import (
	"context"
	"fmt"

	"github.com/twicekit/twicekit/examples/processedjobs"
	"github.com/twicekit/twicekit/twice"
)

func ExampleByJobIDJob() {
	ctx := context.Background()
	rep := twice.Check(ctx, processedjobs.ByJobIDJob())
	for _, f := range rep.Findings {
		fmt.Println(f.Headline)
	}

	rep = twice.Check(ctx, processedjobs.ByJobIDJob(),
		twice.WithoutDuplicateEnqueue("enqueued in the order's transaction"))
	fmt.Println("with a transactional producer:", rep.OK())
	// Output:
	// not idempotent: duplicate enqueue: the producer enqueued the same payload twice, under two job IDs
	// with a transactional producer: true
}
