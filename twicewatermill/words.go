package twicewatermill

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/twice"
)

// words describes a scenario as it happens under watermill-sql.
func (q *queue) words(s twice.Scenario, generic string) string {
	const again = "the subscriber's transaction rolled back with its offset, and watermill-sql delivered the message again"
	switch s.Kind {
	case twice.AckLost:
		return "sequential: the handler returned and the router acked, but the subscriber's transaction (the consumer group's offset) never committed; " + again
	case twice.CrashAfterLast:
		return fmt.Sprintf("crash after the last point (%d of %d): the handler's work had committed, then the subscriber died before its ack committed the offset in its own transaction, and %s; guard the work with a key on the message written in the work's transaction", s.Of, s.Of, again)
	case twice.CrashBefore, twice.CrashAfterApply, twice.Redrive:
		return strings.TrimSuffix(generic, ", then redelivery") + "; " + again
	case twice.DuplicateEnqueue:
		return "duplicate message: the publisher retried a publish that had worked, and watermill-sql delivered both rows, the copy under another UUID (a key on msg.UUID does not catch it; a key on the payload does)"
	}
	return generic
}
