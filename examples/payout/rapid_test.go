package payout_test

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/examples/payout"
	"github.com/twicekit/twicekit/generators"
	"github.com/twicekit/twicekit/twice"
)

// A key from the job pays any restaurant's week once, redriven within the
// provider's window.
func TestJobKeyProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := payout.PayRestaurant{
			RestaurantID: generators.IDs().Draw(rt, "restaurant"),
			Week:         generators.ISOWeek(generators.Times().Draw(rt, "week")),
			AmountPaise:  rapid.Int64Range(1, generators.MaxMinor).Draw(rt, "amount"),
		}
		twice.AssertIdempotent(rt, twice.Job{
			Name:   "payout: key from the job",
			Schema: payout.Schema,
			Run:    p.Pay(p.IdempotencyKey),
		}, twice.LateRedrive(time.Hour))
	})
}
