package leakcheck

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestAFailureStaysAFailure(t *testing.T) {
	if got := check(3, io.Discard); got != 3 {
		t.Fatalf("check(3) = %d, want 3", got)
	}
}

func TestALeakFailsAPassingRun(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the leak: blocked until the test lets it go
		<-stop
		close(done)
	}()
	var out strings.Builder
	if got := check(0, &out); got != 1 {
		t.Errorf("check(0) with a blocked goroutine = %d, want 1", got)
	}
	if !strings.HasPrefix(out.String(), "leakcheck: the tests passed but left goroutines running:\n") ||
		!strings.Contains(out.String(), "TestALeakFailsAPassingRun") {
		t.Errorf("the message does not name the leaked goroutine:\n%s", out.String())
	}
	close(stop)
	<-done
	if got := check(0, io.Discard); got != 0 {
		t.Errorf("check(0) after the goroutine ended = %d, want 0", got)
	}
}

func TestGoroutinesThatEndSoonAreNoLeak(t *testing.T) {
	go func() { time.Sleep(50 * time.Millisecond) }() // ends while goleak retries
	if got := check(0, io.Discard); got != 0 {
		t.Errorf("check(0) with a goroutine that ends soon = %d, want 0", got)
	}
}
