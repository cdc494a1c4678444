package refund_test

import (
	"context"
	"fmt"

	"github.com/twicekit/twicekit/examples/refund"
	"github.com/twicekit/twicekit/twice"
)

// The real stripe-go client, keyed by the job, refunds once whoever
// retries; left to its own keys, a crash after Stripe refunded refunds
// again.
func ExampleJobKeyJob() {
	ctx := context.Background()
	rep := twice.Check(ctx, refund.JobKeyJob())
	fmt.Println("key from the job:", rep.OK())

	rep = twice.Check(ctx, refund.AutoKeyJob(), twice.Only("crash-after@2"))
	f := rep.Findings[0]
	fmt.Println(f.Headline)
	fmt.Println(f.Hints[0])
	// Output:
	// key from the job: true
	// not idempotent: crash after point 2 of 3 was applied (payment POST /v1/refunds (Idempotency-Key ‹new key 1›)), before the job heard back, then redelivery
	// the key changed between attempts (‹new key 1›, ‹new key 2›): derive it from the job, not the attempt
}
