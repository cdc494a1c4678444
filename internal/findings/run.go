package findings

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/report"
)

// Run is a scenario's run as a finding draws it.
type Run struct {
	// Attempts lists every delivery, in the order they started.
	Attempts []Attempt
	// Interleaving is what the scheduler did in a concurrent scenario, as
	// internal/report draws it; nil in a sequential one.
	Interleaving *report.Interleaving
}

// Attempt is an attempt of a run as a finding draws it (twice's
// AttemptRecord).
type Attempt struct {
	// Name is "attempt N of JOB"; Kind a follow-up's kind.
	Name string
	Kind string
	// Points lists the points the attempt reached, in order.
	Points []faults.Step
	// Crashed says the check crashed the attempt: CrashAt is the point it
	// was refused (Index 0: between points) and Reason says why.
	Crashed bool
	CrashAt faults.Step
	Reason  string
	// Err is what the job returned; Panic the panic value and its stack.
	Err   error
	Panic string
	// End is how it ended; Note is the queue's words.
	End  End
	Note string
}

// End says how an attempt ended: twice's AttemptEnd, value for value.
type End int

// How attempts end.
const (
	EndReturned End = iota + 1
	EndError
	EndCrashed
	EndCrashedBeforeAck
	EndPanic
	EndGoexit
	EndHung
	EndNotDelivered
)

// EndOf is how an attempt ended, from what it did: not delivered, else
// panicked, else called runtime.Goexit, else hung, else crashed before the
// ack, else crashed, else returned an error, else returned.
func EndOf(notDelivered, panicked, goexit, hung, crashedBeforeAck, crashed, failed bool) End {
	switch {
	case notDelivered:
		return EndNotDelivered
	case panicked:
		return EndPanic
	case goexit:
		return EndGoexit
	case hung:
		return EndHung
	case crashedBeforeAck:
		return EndCrashedBeforeAck
	case crashed:
		return EndCrashed
	case failed:
		return EndError
	}
	return EndReturned
}

// Draw is the run as internal/report draws it.
func (r *Run) Draw() report.Run {
	var v report.Run
	for _, a := range r.Attempts {
		v.Attempts = append(v.Attempts, a.draw())
	}
	v.Interleaving = r.Interleaving
	return v
}

// draw is an attempt as internal/report draws it.
func (a Attempt) draw() report.Attempt {
	v := report.Attempt{
		Name:    a.Name,
		Kind:    a.Kind,
		Points:  a.Points,
		Outcome: outcome(a),
		CrashAt: a.CrashAt,
		Reason:  a.Reason,
		Crashed: a.Crashed,
		Note:    a.Note,
	}
	switch a.End {
	case EndNotDelivered:
		v.End = report.NotDelivered
	case EndCrashedBeforeAck:
		v.End = report.CrashedBeforeAck
	case EndCrashed:
		v.End = report.Crashed
	}
	return v
}

// outcome is how an attempt ended, in the words of the sequential timeline.
func outcome(a Attempt) string {
	switch a.End {
	case EndPanic:
		return "panicked"
	case EndGoexit:
		return "called t.FailNow (runtime.Goexit)"
	case EndHung:
		return "hung"
	case EndCrashed, EndCrashedBeforeAck:
		if a.CrashAt.Index > 0 {
			return fmt.Sprintf("CRASH before %d %s", a.CrashAt.Index, a.CrashAt.Label)
		}
		return fmt.Sprintf("CRASH (%s)", a.Reason)
	case EndError:
		return "returned error: " + oneLine(a.Err.Error())
	}
	return "done" // returned, or not delivered
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// crashLabel is the label of the point the scenario's fault hit: the point a
// crash refused, or the effect point (point) whose apply or reply it struck.
func crashLabel(r *Run, point int) string {
	var attempts []report.Attempt
	for _, a := range r.Attempts {
		attempts = append(attempts, report.Attempt{Points: a.Points, CrashAt: a.CrashAt, Crashed: a.Crashed})
	}
	return report.CrashLabel(attempts, point)
}
