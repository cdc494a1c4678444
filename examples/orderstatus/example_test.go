package orderstatus_test

import (
	"context"
	"fmt"

	"github.com/twicekit/twicekit/examples/orderstatus"
	"github.com/twicekit/twicekit/twice"
)

func ExampleAdvanceJob() {
	rep := twice.Check(context.Background(), orderstatus.AdvanceJob())
	d := rep.Findings[0].Database[0]
	fmt.Println(rep.Findings[0].Token, d.Table)
	fmt.Println("- want", d.Missing[0])
	fmt.Println("+ got ", d.Extra[0])
	// Output:
	// sequential orders
	// - want (id=9812, status='delivered')
	// + got  (id=9812, status='closed')
}

func ExampleMakeDeliveredJob() {
	rep := twice.Check(context.Background(), orderstatus.MakeDeliveredJob())
	fmt.Println("idempotent:", rep.OK())
	// Output:
	// idempotent: true
}
