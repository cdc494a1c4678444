package leakcheck

import (
	"testing"
	"time"
)

func TestCodeKeepsAFailure(t *testing.T) {
	if got := Code(3); got != 3 {
		t.Fatalf("Code(3) = %d, want 3", got)
	}
}

func TestCodeFailsALeak(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the leak: blocked until the test lets it go
		<-stop
		close(done)
	}()
	if got := Code(0); got != 1 {
		t.Errorf("Code(0) with a blocked goroutine = %d, want 1", got)
	}
	close(stop)
	<-done
	if got := Code(0); got != 0 {
		t.Errorf("Code(0) after the goroutine ended = %d, want 0", got)
	}
}

func TestCodePassesWhenGoroutinesEnd(t *testing.T) {
	go func() { time.Sleep(50 * time.Millisecond) }() // ends while goleak retries
	if got := Code(0); got != 0 {
		t.Errorf("Code(0) with a goroutine that ends soon = %d, want 0", got)
	}
}
