package storedresults_test

import (
	"context"
	"fmt"
	"time"

	"github.com/twicekit/twicekit/examples/storedresults"
	"github.com/twicekit/twicekit/twice"
)

// Redriven an hour later, the computed job asks the provider for a larger
// amount under the same key: the provider refuses it and pays once, the
// queue gives up, and the compensations row is missing. Without the late
// redrive it passes (TestComputedAtRunTimeChangesOnALateRetry).
func ExampleComputedJob() {
	rep := twice.Check(context.Background(), storedresults.ComputedJob(), twice.LateRedrive(time.Hour))
	for _, f := range rep.Findings {
		fmt.Println(f.Token)
	}
	f := rep.Findings[0]
	fmt.Println(f.Hints[0])
	for _, p := range f.Problems {
		fmt.Printf("%v (%s): %s\n", p.Kind, p.Attempt, p.Text)
	}
	for _, d := range f.Database {
		fmt.Println("differs:", d.Table)
	}
	fmt.Println("effects that differ:", len(f.Effects))
	// Output:
	// redrive-1h@2
	// the retry computed a different request (amount 10000 → 15000): store what you computed before acting on it
	// gave-up (job-1): job-1 never succeeded: the queue gave up after 5 deliveries; the last time it returned: compensation for order 9812: the provider answered 422 Unprocessable Entity
	// differs: compensations
	// effects that differ: 0
}

// Stored first, the compensation is paid once, redriven an hour later or
// not: the fixed twin of the computed job, checked here (and, for drawn
// orders, by TestStoredFirstProperty).
func ExampleStoredFirstJob() {
	rep := twice.Check(context.Background(), storedresults.StoredFirstJob(), twice.LateRedrive(time.Hour))
	fmt.Println("idempotent:", rep.OK())
	// Output:
	// idempotent: true
}
