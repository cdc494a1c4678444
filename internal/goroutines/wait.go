package goroutines

import "time"

// Wait waits until no goroutine labelled with label whose function is the
// job's runs (Count), at most bound.
// It reports whether one still ran when the wait ended.
func Wait(label string, bound time.Duration) (outlived bool) {
	deadline := time.Now().Add(bound)
	for Count(label) > 0 {
		if !time.Now().Before(deadline) {
			return true
		}
		time.Sleep(2 * time.Millisecond)
	}
	return false
}
