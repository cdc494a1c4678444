package receipt_test

import (
	"context"
	"fmt"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/examples/receipt"
	"github.com/twicekit/twicekit/twice"
)

// Send-then-mark is not exactly-once: a crash after the send sends the
// receipt again. Declared at-least-once, it keeps its promise.
func ExampleSendThenMarkJob() {
	ctx := context.Background()
	rep := twice.Check(ctx, receipt.SendThenMarkJob())
	f := rep.Findings[0]
	fmt.Println(f.Headline)
	fmt.Println(f.Effects[0])

	rep = twice.Check(ctx, receipt.SendThenMarkJob(), twice.EffectPolicy("email", effects.AtLeastOnce))
	fmt.Println("at-least-once:", rep.OK())
	// Output:
	// not idempotent: crash before point 3 of 3 (UPDATE orders SET receipt_sent_at = $2 WHERE id = $1), then redelivery
	// email ann@example.com "Your receipt for order 9812\nTotal: ₹1299.00": want 1, got 2 (exactly-once)
	// at-least-once: true
}
