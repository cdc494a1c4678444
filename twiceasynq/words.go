package twiceasynq

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/twice"
)

// words describes a scenario as it happens under asynq.
func (q *queue) words(s twice.Scenario, generic string) string {
	const recovered = "the task's lease expired and asynq's recoverer delivered it again"
	switch s.Kind {
	case twice.AckLost:
		return "sequential: the handler returned, asynq's ack in Redis was lost, " + recovered
	case twice.CrashAfterLast:
		return fmt.Sprintf("crash after the last point (%d of %d): the handler's work had committed, then the worker died before asynq acked the task in Redis (its ack never commits with the work), and %s; guard the work with a key on asynq.GetTaskID written in the work's transaction", s.Of, s.Of, recovered)
	case twice.CrashBefore, twice.CrashAfterApply, twice.Redrive:
		return strings.TrimSuffix(generic, ", then redelivery") + "; " + recovered
	case twice.DuplicateEnqueue:
		if q.set.taskID != "" {
			return fmt.Sprintf("duplicate enqueue: the producer enqueued the task again under TaskID(%q) after the first had run; asynq accepts it once the first is no longer stored (Retention keeps it)", q.set.taskID)
		}
		return "duplicate enqueue: the producer enqueued the task twice, and asynq gave the copy another task ID (asynq.TaskID derived from the payload gives both the same)"
	}
	return generic
}
