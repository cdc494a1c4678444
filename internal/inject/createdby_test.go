package inject

import (
	"strings"
	"sync"
	"testing"
)

// TestCreatedByNamesTheGoStatement: a goroutine's creator prints as its
// function and the go statement's file:line relative to the module, with
// no goroutine ID and no offset.
func TestCreatedByNamesTheGoStatement(t *testing.T) {
	var got string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the line named below
		defer wg.Done()
		got = CreatedBy()
	}()
	wg.Wait()
	const want = "inject.TestCreatedByNamesTheGoStatement at internal/inject/createdby_test.go:16"
	if got != want {
		t.Errorf("CreatedBy() = %q, want %q", got, want)
	}
	stack := "goroutine 7 [running]:\nmain.f()\n\t/x/f.go:3 +0x1d\n" +
		"created by example.com/app/jobs.notify.func2 in goroutine 6\n\t/nowhere/app/jobs/notify.go:20 +0x8f\n"
	if got := createdBy(stack); got != "jobs.notify.func2 at notify.go:20" || strings.Contains(got, "goroutine") {
		t.Errorf("createdBy = %q", got)
	}
}
