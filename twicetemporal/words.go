package twicetemporal

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/twice"
)

// words describes a scenario as it happens under Temporal, from what
// happened in it (h): Temporal's retry is named only when the timeline has
// one.
func (q *queue) words(s twice.Scenario, h twice.Happened, generic string) string {
	timedOut := fmt.Sprintf("the attempt timed out (StartToCloseTimeout %s) and Temporal retried it", q.act.startToClose())
	if hb := q.act.Options.HeartbeatTimeout; hb > 0 {
		timedOut = fmt.Sprintf("the attempt timed out (HeartbeatTimeout %s) and Temporal retried it", hb)
	}
	if !h.Redelivered {
		why := "its RetryPolicy's MaximumAttempts was reached"
		if h.Ended {
			why = "the error is non-retryable"
		}
		timedOut = strings.TrimSuffix(timedOut, " and Temporal retried it") + ", and Temporal did not retry it: " + why
	}
	switch {
	case !h.Redelivered:
	case q.heartbeatsSeen() == 0:
	case q.lag == 0:
		timedOut += " from the last heartbeat that reached the server"
	case q.lag == 1:
		timedOut += " from the heartbeat before the last (the last one throttled or lost with the worker)"
	default:
		timedOut += fmt.Sprintf(" from %d heartbeats before the last (the later ones throttled or lost with the worker)", q.lag)
	}
	switch s.Kind {
	case twice.AckLost:
		return "sequential: the activity returned, its completion never reached the server, and " + timedOut
	case twice.CrashAfterLast:
		return fmt.Sprintf("crash after the last point (%d of %d): the activity's work was done, then the worker died before reporting its completion, and %s", s.Of, s.Of, timedOut)
	case twice.CrashBefore, twice.CrashAfterApply, twice.Redrive:
		return strings.TrimSuffix(generic, ", then redelivery") + ": the worker died, " + timedOut
	case twice.ReplyLost:
		if h.Redelivered {
			return generic + "; the attempt returned the error and Temporal retried it"
		}
		return generic
	case twice.Overlap:
		return fmt.Sprintf("overlap after point %d of %d: the attempt missed its HeartbeatTimeout (%s) while still running, Temporal retried it on another worker, which ran to the end, then the first attempt resumed", s.Point, s.Of, q.act.Options.HeartbeatTimeout)
	case twice.Interleaved:
		return fmt.Sprintf("concurrent: the attempt missed its HeartbeatTimeout (%s) while still running and Temporal's retry ran at the same time, interleaved %s (A is the first attempt, B the retry)", q.act.Options.HeartbeatTimeout, s.Schedule)
	}
	return generic
}
