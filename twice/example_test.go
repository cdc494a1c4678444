package twice_test

import (
	"context"
	"fmt"

	"github.com/twicekit/twicekit/twice"
)

// A job writing now() under a guard is idempotent: the column differs
// between two clean runs, so twice compares it by shape. With ExactValues
// every scenario differs in it, and the report prints the times as
// placeholders.
func ExampleExactValues() {
	job := freshJob("ship order 11", shipGuardedSQL)
	rep := twice.Check(context.Background(), job, twice.WithoutConcurrency("an example"))
	fmt.Println("by shape:", rep.OK(), rep.Nondeterministic)

	rep = twice.Check(context.Background(), job, twice.ExactValues(), twice.Only("sequential"))
	f := rep.Findings[0]
	fmt.Println(f.Database[0].Missing[0])
	fmt.Println(f.Database[0].Extra[0])
	// Output:
	// by shape: true [orders.shipped_at]
	// (id=11, status='shipped', shipped_at=‹time 1›, ship_count=0)
	// (id=11, status='shipped', shipped_at=‹time 2›, ship_count=0)
}
