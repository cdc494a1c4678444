package sched

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/internal/inject"
)

// EventKind says what happened in a run.
type EventKind int

// The events of a [Trace].
const (
	// Released: the scheduler let the attempt proceed with its point Step.
	Released EventKind = iota + 1
	// Blocked: the attempt's statement at point Step waits on a lock that
	// the attempts On hold; the scheduler switched.
	Blocked
	// Returned: the attempt's function returned.
	Returned
)

// Event is one step of an interleaving.
type Event struct {
	Kind    EventKind
	Attempt int
	Step    inject.Step
	On      []int
}

func (e Event) String() string {
	switch e.Kind {
	case Released:
		return fmt.Sprintf("%s %s", Letter(e.Attempt), e.Step)
	case Blocked:
		return fmt.Sprintf("%s blocked on %s", Letter(e.Attempt), letters(e.On))
	case Returned:
		return fmt.Sprintf("%s returned", Letter(e.Attempt))
	}
	return fmt.Sprintf("event(%d)", int(e.Kind))
}

// Choice is one decision of a run: the attempts that were ready and the one
// released.
type Choice struct {
	Ready []int
	Chose int
}

// Trace is the interleaving a run took. It is a function of the choices
// alone (and of the job and the database): events that happen while several
// attempts run at once are recorded in attempt order at the next decision.
type Trace struct {
	Attempts  int
	Events    []Event
	Decisions []Choice
}

// Schedule is the sequence of releases the run made; replayed as a
// [Chooser], it gives the same interleaving.
func (t *Trace) Schedule() Replay {
	s := make(Replay, len(t.Decisions))
	for i, d := range t.Decisions {
		s[i] = d.Chose
	}
	return s
}

// Token is the token of [Trace.Schedule].
func (t *Trace) Token() string { return t.Schedule().Token() }

// String lists the events, one a line.
func (t *Trace) String() string {
	var b strings.Builder
	for _, e := range t.Events {
		b.WriteString(e.String() + "\n")
	}
	return b.String()
}

// Blocks reports whether any attempt was seen blocked on another's lock.
func (t *Trace) Blocks() bool {
	for _, e := range t.Events {
		if e.Kind == Blocked {
			return true
		}
	}
	return false
}
