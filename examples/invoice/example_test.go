package invoice_test

import (
	"context"
	"fmt"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/examples/invoice"
	"github.com/twicekit/twicekit/twice"
)

// The document's guarded update, with email_sent_at compared as "set or
// not" and the email declared at-most-once.
func ExampleGuardedJob() {
	rep := twice.Check(context.Background(), invoice.GuardedJob(),
		twice.Normalize("invoices.email_sent_at", func(v string) string {
			if v == "NULL" {
				return v
			}
			return "set"
		}),
		twice.EffectPolicy("email", effects.AtMostOnce))
	fmt.Println("idempotent:", rep.OK())
	// Output:
	// idempotent: true
}
