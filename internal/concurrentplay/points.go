package concurrentplay

import (
	"sync/atomic"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
)

// ImplicitTxOff switches off playing autocommit statements as their
// implicit transactions in the concurrent scenarios; only a test that shows
// what the check misses without it sets it.
var ImplicitTxOff atomic.Bool

// PlaysImplicitTx says whether the concurrent scenarios play every autocommit
// statement as its implicit transaction (two points: the statement, then its
// commit).
func PlaysImplicitTx() bool { return !ImplicitTxOff.Load() }

// Points is what one attempt of a concurrent scenario goes through, from
// the reference run's points before the ack (a goroutine's points after the
// ack: no scheduler holds them): after each autocommit statement (sent
// through pgx outside a transaction block) comes the point at which its
// implicit transaction commits, where the other attempt may run too.
// Sequential and crash scenarios keep one point per statement.
func Points(ref []faults.Step) []faults.Step {
	if !PlaysImplicitTx() {
		return ref
	}
	var out []faults.Step
	for _, st := range ref {
		st.Index = len(out) + 1
		out = append(out, st)
		if st.Kind == faults.SQL && st.Implicit {
			out = append(out, faults.Step{Index: len(out) + 1, Kind: faults.SQL, Label: inject.ImplicitLabel(st.Label)})
		}
	}
	return out
}
