package report

import (
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/sched"
)

// Event is one line of a run's timeline: a point an attempt reached, a
// lock wait, or how the attempt ended. Its fields are twice.JSONEvent's.
type Event struct {
	Attempt string `json:"attempt"`           // "attempt 2 of job-1"
	Type    string `json:"type"`              // "point", "blocked", "released" or "end"
	Point   int    `json:"point,omitempty"`   // the point's number in its attempt
	Kind    string `json:"kind,omitempty"`    // the point's kind: "sql", "effect" or "point"
	Label   string `json:"label,omitempty"`   // the point's label, or how the attempt ended
	On      string `json:"on,omitempty"`      // blocked/released: the attempts holding the lock
	Crashed bool   `json:"crashed,omitempty"` // end: the attempt was crashed
}

// Events lists what the attempts of a run did, in the order the text
// timeline shows it: a concurrent scenario's interleaving first, then the
// redeliveries one after the other.
func Events(r Run) []Event {
	var ev []Event
	later := r.Attempts
	if it := r.Interleaving; it != nil {
		n := r.together()
		recs := r.Attempts[:n]
		later = r.Attempts[n:]
		ended := make([]bool, n)
		waiting := map[int]string{}
		for _, e := range it.Events {
			if e.Attempt >= n {
				continue
			}
			name := recs[e.Attempt].Name
			switch e.Kind {
			case sched.Released:
				if on, ok := waiting[e.Attempt]; ok {
					ev = append(ev, Event{Attempt: name, Type: "released", On: on})
					delete(waiting, e.Attempt)
				}
				ev = append(ev, pointEvent(name, e.Step))
			case sched.Blocked:
				waiting[e.Attempt] = Letters(e.On)
				ev = append(ev, Event{Attempt: name, Type: "blocked", Point: e.Step.Index, On: Letters(e.On)})
			case sched.Returned:
				ev = append(ev, endEvent(recs[e.Attempt]))
				ended[e.Attempt] = true
			}
		}
		for i, rec := range recs {
			if !ended[i] {
				ev = append(ev, endEvent(rec))
			}
		}
	}
	for _, a := range later {
		for _, s := range a.Points {
			ev = append(ev, pointEvent(a.Name, s))
		}
		ev = append(ev, endEvent(a))
	}
	return ev
}

func pointEvent(attempt string, s faults.Step) Event {
	return Event{Attempt: attempt, Type: "point", Point: s.Index, Kind: s.Kind.String(), Label: s.Label}
}

func endEvent(a Attempt) Event {
	label := a.Outcome
	if a.End == CrashedBeforeAck {
		label = "returned; CRASH before the ack"
	}
	e := Event{Attempt: a.Name, Type: "end", Label: label, Crashed: a.Crashed}
	if a.Crashed && a.CrashAt.Index > 0 {
		e.Point = a.CrashAt.Index
	}
	return e
}
