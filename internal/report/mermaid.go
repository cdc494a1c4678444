package report

import (
	"fmt"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/reportfmt"
	"github.com/twicekit/twicekit/internal/sched"
)

// Mermaid draws a run's attempts as a Mermaid sequenceDiagram: the
// attempts, PostgreSQL and each effect provider as participants, every
// point, the crash marker, and in concurrent scenarios the lock waits and
// who released them.
func Mermaid(r Run) string {
	d := &reportfmt.Diagram{}
	aliases := map[int]string{}
	together := r.together() // the attempts that ran at once, named A, B as in the text
	for i, a := range r.Attempts {
		aliases[i] = fmt.Sprintf("a%d", i+1)
		name := a.Name
		if i < together {
			name += " (" + concurrent.Letter(i) + ")"
		}
		d.Participant(aliases[i], name)
	}
	d.Participant("pg", "PostgreSQL")
	// Effect providers, in order of first use.
	for _, a := range r.Attempts {
		for _, s := range a.Points {
			if s.Kind == faults.Effect {
				d.Participant(reportfmt.ProviderAlias(s.Label), reportfmt.ProviderName(s.Label))
			}
		}
	}
	later := 0
	if it := r.Interleaving; it != nil {
		n := together
		later = n
		ended := make([]bool, n)
		waiting := map[int][]int{}
		for _, e := range it.Events {
			if e.Attempt >= n {
				continue
			}
			who := aliases[e.Attempt]
			switch e.Kind {
			case sched.Released:
				if on, ok := waiting[e.Attempt]; ok {
					for _, h := range on {
						d.Line("%s-->>%s: releases the lock", aliases[h], who)
					}
					delete(waiting, e.Attempt)
				}
				d.Step(who, e.Step)
			case sched.Blocked:
				waiting[e.Attempt] = e.On
				d.Line("Note over %s: point %d waits for a lock held by %s", who, e.Step.Index, Letters(e.On))
			case sched.Returned:
				drawEnd(d, who, r.Attempts[e.Attempt])
				ended[e.Attempt] = true
			}
		}
		for _, s := range it.Stuck {
			d.Line("Note over %s: %s", aliases[s.Attempt], s.Note)
		}
		for i := 0; i < n; i++ {
			if !ended[i] {
				drawEnd(d, aliases[i], r.Attempts[i])
			}
		}
	}
	for i := later; i < len(r.Attempts); i++ {
		a := r.Attempts[i]
		for _, s := range a.Points {
			d.Step(aliases[i], s)
		}
		drawEnd(d, aliases[i], a)
	}
	return d.String()
}

// drawEnd draws how an attempt ended.
func drawEnd(d *reportfmt.Diagram, who string, a Attempt) {
	switch a.End {
	case CrashedBeforeAck:
		d.Line("Note over %s: returned, then ✗ CRASH before the ack", who)
	case Crashed:
		d.Line("Note over %s: ✗ %s", who, a.Outcome)
	default:
		d.Line("Note over %s: %s", who, a.Outcome)
	}
}
