package twice

import "testing"

// BenchmarkJobGoroutines measures the look every attempt takes once Run
// returned (after_run.go): one goroutine profile, read for the attempt's
// label, with the test binary's goroutines as they are.
func BenchmarkJobGoroutines(b *testing.B) {
	label := nextAttemptLabel()
	for b.Loop() {
		if n := jobGoroutines(label); n != 0 {
			b.Fatalf("%d goroutines carry a fresh label", n)
		}
	}
}
