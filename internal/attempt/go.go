package attempt

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/twicekit/twicekit/internal/goroutines"
	"github.com/twicekit/twicekit/internal/inject"
)

// Exit is how the job's function ended: the error it returned, else its
// panic (with CleanStack's stack), else the job's line that called
// runtime.Goexit.
type Exit struct {
	Err    error
	Panic  string
	Goexit string
}

// Go runs fn(ctx, arg), the job's function, on a goroutine of its own
// labelled label (goroutines.Label), and sends how it ended on done. fn is
// called directly by that goroutine, so a panic's stack holds the job's
// frames and then the goroutine's entry only.
func Go[T any](run *inject.Run, label string, done chan<- Exit, fn func(context.Context, T) error, ctx context.Context, arg T) {
	go func() {
		returned := false
		defer func() {
			if returned {
				return
			}
			// Whatever the job's goroutines call from now on is after Run:
			// refused at once, not when the waiter gets to it.
			run.Refuse()
			if p := recover(); p != nil {
				done <- Exit{Panic: fmt.Sprintf("panic: %v\n%s", p, CleanStack(string(debug.Stack())))}
			} else {
				// Neither a return nor a panic: runtime.Goexit, which is
				// what t.FailNow, t.Fatal and testify's require call.
				done <- Exit{Goexit: goroutines.GoexitSite(string(debug.Stack()))}
			}
		}()
		goroutines.Label(label)
		err := fn(ctx, arg)
		returned = true
		run.Return() // the attempt's context ends with Run, as every queue ends it
		done <- Exit{Err: err}
	}()
}
