package twicegue

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/twice"
)

// gueWords describes a scenario as it happens under gue.
func gueWords(s twice.Scenario, generic string) string {
	const relocked = "its transaction rolled back, unlocking the job's row, and another worker locked it again"
	switch s.Kind {
	case twice.AckLost:
		return "sequential: the work function returned and gue's commit of the job's deletion was lost; " + relocked
	case twice.CrashBefore, twice.CrashAfterApply, twice.Redrive:
		return strings.TrimSuffix(generic, ", then redelivery") + "; " + relocked
	case twice.CrashAfterLast:
		return fmt.Sprintf("crash after the last point (%d of %d), after gue's commit of the job's deletion", s.Of, s.Of)
	case twice.DuplicateEnqueue:
		return "duplicate enqueue: the producer enqueued the job twice (two gue_jobs rows; gue has no uniqueness of its own)"
	case twice.Overlap:
		return fmt.Sprintf("overlap after point %d of %d: a second worker came for the job while the first held its row lock (gue skips locked rows), then the first resumed", s.Point, s.Of)
	case twice.Interleaved:
		return fmt.Sprintf("concurrent: two workers came for the job at once, interleaved %s (gue locks its row FOR UPDATE SKIP LOCKED)", s.Schedule)
	}
	return generic
}
