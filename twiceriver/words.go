package twiceriver

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/twice"
)

// riverWords describes a scenario as it happens under River.
func riverWords(s twice.Scenario, generic string) string {
	const rescued = "River's rescuer ran it again after RescueStuckJobsAfter"
	switch s.Kind {
	case twice.AckLost:
		return "sequential: Work returned, River's completion of the job was lost (it stayed running), and " + rescued
	case twice.CrashAfterLast:
		return fmt.Sprintf("crash after the last point (%d of %d): the worker's work had committed, then it died before River completed the job (it stayed running), and %s; complete the job in the work's transaction with river.JobCompleteTx", s.Of, s.Of, rescued)
	case twice.CrashBefore, twice.CrashAfterApply, twice.Redrive:
		return strings.TrimSuffix(generic, ", then redelivery") + "; the job stayed running and " + rescued
	case twice.DuplicateEnqueue:
		return "duplicate enqueue: the job was inserted twice (two river_job rows of the same kind and args; UniqueOpts in its InsertOpts would have skipped the second)"
	case twice.Overlap:
		return fmt.Sprintf("overlap after point %d of %d: the job was still running past RescueStuckJobsAfter, River's rescuer ran it again to the end, then the first run resumed", s.Point, s.Of)
	case twice.Interleaved:
		return fmt.Sprintf("concurrent: River's rescuer ran the job again while its first run was still running past RescueStuckJobsAfter, interleaved %s (A is the first run, B the rescuer's)", s.Schedule)
	}
	return generic
}
