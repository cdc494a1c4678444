package shipped_test

import (
	"context"
	"fmt"

	"github.com/twicekit/twicekit/examples/shipped"
	"github.com/twicekit/twicekit/twice"
)

// A guarded now() passes with no option: the column whose values differ
// between two clean runs is compared by shape.
func ExampleShipGuardedJob() {
	rep := twice.Check(context.Background(), shipped.ShipGuardedJob())
	fmt.Println("idempotent:", rep.OK())
	fmt.Println("compared by shape:", rep.Varying)
	// Output:
	// idempotent: true
	// compared by shape: [orders.shipped_at]
}
