package storedresults_test

import (
	"context"
	"fmt"
	"time"

	"github.com/twicekit/twicekit/examples/storedresults"
	"github.com/twicekit/twicekit/twice"
)

func ExampleComputedJob() {
	rep := twice.Check(context.Background(), storedresults.ComputedJob(), twice.LateRedrive(time.Hour))
	f := rep.Findings[0]
	fmt.Println(f.Token)
	fmt.Println(f.Hints[0])
	// Output:
	// redrive-1h@2
	// the retry computed a different request (amount 10000 → 15000): store what you computed before acting on it
}

func ExampleStoredFirstJob() {
	rep := twice.Check(context.Background(), storedresults.StoredFirstJob(), twice.LateRedrive(time.Hour))
	fmt.Println("idempotent:", rep.OK())
	// Output:
	// idempotent: true
}
