package loyalty_test

import (
	"context"
	"fmt"

	"github.com/twicekit/twicekit/examples/loyalty"
	"github.com/twicekit/twicekit/twice"
)

func ExampleLedgerJob() {
	rep := twice.Check(context.Background(), loyalty.LedgerJob())
	fmt.Println("idempotent:", rep.OK())
	// Output:
	// idempotent: true
}

func ExampleIncrementJob() {
	rep := twice.Check(context.Background(), loyalty.IncrementJob())
	f := rep.Findings[0]
	fmt.Println(f.Headline)
	fmt.Print(f.Timeline)
	fmt.Println("table:", f.Database[0].Table)
	// Output:
	// not idempotent: sequential: the ack was lost and the same job was delivered again
	// timeline:
	//   attempt 1 of job-1:
	//       1  UPDATE customers SET points = points + $2 WHERE id = $1
	//          done
	//   attempt 2 of job-1:
	//       1  UPDATE customers SET points = points + $2 WHERE id = $1
	//          done
	// table: customers
}
