package sched_test

import (
	"fmt"

	"github.com/twicekit/twicekit/internal/sched"
)

// A schedule token names, in order, the attempt released at each point: A is
// the first attempt, B the second; a count repeats a letter.
func ExampleParseSchedule() {
	s, err := sched.ParseSchedule("AABBBA")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Token(), []int(s))

	s, _ = sched.ParseSchedule("A2B3A1")
	fmt.Println(s.Token())

	_, err = sched.ParseSchedule("A2xB")
	fmt.Println(err)
	// Output:
	// A2B3A [0 0 1 1 1 0]
	// A2B3A
	// concurrent: bad schedule token "A2xB" at offset 2: want an attempt letter A-Z (A is the first attempt, B the second), optionally followed by a count, like A2B3A1
}

// Two attempts of five points each have C(10, 5) interleavings; a budget
// enumerates them when they fit and samples them with PCT otherwise.
func ExampleBudget_Choose() {
	fmt.Println(sched.Interleavings(5, 5))
	fmt.Println(quickBudget.Choose(2, 2), "|", defaultBudget.Choose(5, 5), "|", thoroughBudget.Choose(5, 5))
	// Output:
	// 252
	// every interleaving | PCT samples | every interleaving
}
