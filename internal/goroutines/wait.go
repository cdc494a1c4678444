package goroutines

import "time"

// Wait waits until no goroutine labelled with label whose function is the
// job's runs (Count), at most bound.
// It reports whether one still ran when the wait ended.
// It looks again after 1 ms, then after twice as long each time, up to
// maxPause: each look reads every goroutine's stack.
func Wait(label string, bound time.Duration) (outlived bool) {
	deadline := time.Now().Add(bound)
	pause := time.Millisecond
	for Count(label) > 0 {
		now := time.Now()
		if !now.Before(deadline) {
			return true
		}
		time.Sleep(min(pause, deadline.Sub(now)))
		pause = min(2*pause, maxPause)
	}
	return false
}

// maxPause bounds the pause between two looks of Wait.
const maxPause = 32 * time.Millisecond
