package payout_test

import (
	"context"
	"fmt"
	"time"

	"github.com/twicekit/twicekit/examples/payout"
	"github.com/twicekit/twicekit/twice"
)

// A key from the job protects every retry the provider still remembers, and
// none after its window.
func ExampleJobKeyJob() {
	ctx := context.Background()
	rep := twice.Check(ctx, payout.JobKeyJob(), twice.LateRedrive(time.Hour))
	fmt.Println("redriven an hour later:", rep.OK())

	rep = twice.Check(ctx, payout.JobKeyJob(), twice.LateRedrive(48*time.Hour))
	f := rep.Findings[0]
	fmt.Println("redriven two days later:", f.Token)
	fmt.Println(f.Hints[0])
	// Output:
	// redriven an hour later: true
	// redriven two days later: redrive-48h@2
	// the provider applied key payout-restaurant-381-2026-W42 2 times: it had forgotten the key (the retry came after its idempotency window)
}
