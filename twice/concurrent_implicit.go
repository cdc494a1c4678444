package twice

import (
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/concurrentplay"
)

// implicitTxOff switches off playing autocommit statements as their
// implicit transactions in the concurrent scenarios (export_test.go).
var implicitTxOff = &concurrentplay.ImplicitTxOff

// concurrentPoints is what one attempt of a concurrent scenario goes
// through, from the reference run's points before the ack
// (concurrentplay.Points).
func concurrentPoints(ref []faults.Step) []faults.Step {
	return concurrentplay.Points(ref[:pointsBeforeAck(ref)])
}
