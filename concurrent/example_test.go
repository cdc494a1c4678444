package concurrent_test

import (
	"fmt"

	"github.com/twicekit/twicekit/concurrent"
)

// A schedule token names, in order, the attempt released at each point: A is
// the first attempt, B the second; a count repeats a letter.
func ExampleParseSchedule() {
	s, err := concurrent.ParseSchedule("AABBBA")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Token(), []int(s), s.Attempts(), s.Preemptions())

	s, _ = concurrent.ParseSchedule("A2B3A1")
	fmt.Println(s.Token())

	_, err = concurrent.ParseSchedule("A2xB")
	fmt.Println(err)
	// Output:
	// A2B3A [0 0 1 1 1 0] 2 1
	// A2B3A
	// concurrent: bad schedule token "A2xB" at offset 2: want an attempt letter A-Z (A is the first attempt, B the second), optionally followed by a count, like A2B3A1
}

// Two attempts of five points each have C(10, 5) interleavings.
func ExampleInterleavings() {
	fmt.Println(concurrent.Interleavings(5, 5), concurrent.Interleavings(2, 1, 1))
	// Output: 252 12
}
