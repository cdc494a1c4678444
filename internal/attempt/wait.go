package attempt

import (
	"fmt"
	"time"

	"github.com/twicekit/twicekit/internal/inject"
)

// GraceAfterCancel is how long a hung attempt gets to return once its
// context is cancelled and its connections cut, before it is left behind
// (twice's grace for Wait; a fake's serve gets as long once the check
// closed its connections).
const GraceAfterCancel = 2 * time.Second

// Waited is what Wait saw of an attempt.
type Waited struct {
	Exit
	// Hung: the attempt still ran after the timeout, and was crashed.
	Hung bool
	// Leaked: a hung attempt did not return within the grace period.
	Leaked bool
	// CrashedBeforeAck: it returned, and was crashed before its ack.
	CrashedBeforeAck bool
}

// Wait waits for the job's function to return on done, at most timeout; an
// attempt still running then is hung: hung is called (while it still
// runs), run is crashed, and the attempt gets grace more to return before
// it is left behind. ackLost crashes an attempt that returned, after its
// last point and before the ack, unless it hung, panicked, called
// runtime.Goexit or snoozed (snooze, which may be nil, says whether its
// error is a snooze: a delivery that snoozed has no ack to lose).
func Wait(run *inject.Run, done <-chan Exit, timeout, grace time.Duration, ackLost bool, snooze func(error) bool, hung func()) Waited {
	var w Waited
	timer := time.NewTimer(timeout)
	select {
	case w.Exit = <-done:
		timer.Stop()
	case <-timer.C:
		w.Hung = true
		hung()
		run.Crash(fmt.Sprintf("hung for %s", timeout))
		graceTimer := time.NewTimer(grace)
		select {
		case w.Exit = <-done:
			graceTimer.Stop()
		case <-graceTimer.C:
			w.Leaked = true
		}
	}
	snoozed := w.Err != nil && snooze != nil && snooze(w.Err)
	if ackLost && !w.Hung && w.Panic == "" && w.Goexit == "" && !snoozed {
		// (A delivery that snoozed has no ack to lose.)
		run.Crash("crashed after the last point, before the ack")
		w.CrashedBeforeAck = true
	}
	return w
}
