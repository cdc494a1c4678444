package generators_test

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/generators"
)

// Every generator shrinks toward a documented value; Example(0) shows a
// drawn one (fixed seed, so the output is stable).
func ExampleKey() {
	week := time.Date(2026, time.October, 14, 0, 0, 0, 0, time.UTC)
	fmt.Println(generators.Key("payout", "restaurant", 381, week))
	// Output: payout-restaurant-381-2026-W42
}

func ExampleMoney() {
	fmt.Println(generators.Money{Minor: 8_400_000, Currency: "INR"})
	fmt.Println(generators.Money{Minor: 840, Currency: "JPY"})
	// Output:
	// INR 84000.00
	// JPY 840
}

// Build the input of your own job from the generators with rapid.Custom,
// one labelled draw per field.
func Example_jobInput() {
	type payout struct {
		Restaurant int64
		Amount     generators.Money
		Week       time.Time
		Key        string
	}
	payouts := rapid.Custom(func(t *rapid.T) payout {
		p := payout{
			Restaurant: generators.IDsBetween(1, 1000).Draw(t, "restaurant"),
			Amount:     generators.AmountsBetween(100, 10_000_000, "INR").Draw(t, "amount"),
			Week:       generators.Times().Draw(t, "week"),
		}
		p.Key = generators.Key("payout", "restaurant", p.Restaurant, p.Week)
		return p
	})
	p := payouts.Example(1)
	fmt.Println(p.Amount.Currency, p.Amount.Minor >= 100, p.Key == generators.Key("payout", "restaurant", p.Restaurant, p.Week))
	// Output: INR true true
}

// A scheduler that learns at every point which workers can run asks a
// Chooser; the choices shrink toward fewer context switches.
func ExampleChooser() {
	schedules := rapid.Custom(func(t *rapid.T) concurrent.Schedule {
		c := generators.NewChooser(t, "schedule", 2)
		left := []int{3, 2} // steps of workers A and B
		for left[0]+left[1] > 0 {
			var runnable []int
			for w, n := range left {
				if n > 0 {
					runnable = append(runnable, w)
				}
			}
			left[c.Next(runnable)]--
		}
		return c.Schedule()
	})
	s := schedules.Example(3)
	fmt.Println(len(s), s.Preemptions() <= 2)
	// Output: 5 true
}

func ExampleInterleaving() {
	s, _ := concurrent.ParseSchedule("AABBBA")
	fmt.Println([]int(s), s.Token(), s.Preemptions())
	// rapid shrinks a drawn interleaving toward this one:
	fmt.Println(concurrent.Schedule{0, 0, 0, 1, 1}.Token(), concurrent.Schedule{0, 0, 0, 1, 1}.Preemptions())
	// Output:
	// [0 0 1 1 1 0] A2B3A 1
	// A3B2 0
}
