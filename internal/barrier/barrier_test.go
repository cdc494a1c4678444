package barrier

import (
	"context"
	"sync"
	"testing"
)

// Two callers both pass once both are there; a third passes at once.
func TestEntryLetsTheNPassTogether(t *testing.T) {
	enter := Entry(t, 2, "the test")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = enter(t.Context())
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("the two callers got %v", errs)
	}
	if err := enter(t.Context()); err != nil {
		t.Fatalf("a third caller got %v, want nil", err)
	}
}

// A caller whose context ends stops waiting with the context's error.
func TestEntryStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Entry(t, 2, "the test")(ctx); err != context.Canceled {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}
