package twice

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/reportfmt"
	"github.com/twicekit/twicekit/internal/sched"
)

// Markdown is the report for a reader and for GitHub: the text report in a
// fenced block, then a Mermaid sequence diagram of each finding's timeline
// (the attempts, PostgreSQL and each effect provider as participants, every
// point, the crash marker, and in concurrent scenarios the lock waits and who
// released them). Like the text, it is a deterministic function of the check.
func (r *Report) Markdown() string { return reportfmt.Text(r.markdown()) }

func (r *Report) markdown() string {
	var b strings.Builder
	head, _, _ := strings.Cut(r.String(), "\n")
	fmt.Fprintf(&b, "## %s\n\n```text\n%s\n```\n", head, r.String())
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n### %s\n\n", f.Headline)
		fmt.Fprintf(&b, "Replay: `%s`\n", replayLine(r.testName, f.Token))
		if f.run != nil {
			fmt.Fprintf(&b, "\n```mermaid\n%s```\n", mermaid(f.run))
		}
	}
	return b.String()
}

// mermaid draws a scenario's attempts as a Mermaid sequenceDiagram.
func mermaid(sr *ScenarioRun) string {
	d := &reportfmt.Diagram{}
	aliases := map[int]string{}
	together := 0 // the attempts that ran at once, named A, B as in the text
	if sr.interleaving != nil {
		together = min(sr.interleaving.trace.Attempts, len(sr.Attempts))
	}
	for i, a := range sr.Attempts {
		aliases[i] = fmt.Sprintf("a%d", i+1)
		name := attemptName(a)
		if i < together {
			name += " (" + concurrent.Letter(i) + ")"
		}
		d.Participant(aliases[i], name)
	}
	d.Participant("pg", "PostgreSQL")
	// Effect providers, in order of first use.
	for _, a := range sr.Attempts {
		for _, s := range a.Points {
			if s.Kind == faults.Effect {
				d.Participant(reportfmt.ProviderAlias(s.Label), reportfmt.ProviderName(s.Label))
			}
		}
	}
	later := 0
	if it := sr.interleaving; it != nil {
		n := min(it.trace.Attempts, len(sr.Attempts))
		later = n
		ended := make([]bool, n)
		waiting := map[int][]int{}
		for _, e := range it.trace.Events {
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
				d.Line("Note over %s: point %d waits for a lock held by %s", who, e.Step.Index, letterList(e.On))
			case sched.Returned:
				drawEnd(d, who, sr.Attempts[e.Attempt])
				ended[e.Attempt] = true
			}
		}
		if it.stuck != nil {
			for _, i := range it.stuck.Stuck {
				if i < n {
					d.Line("Note over %s: %s", aliases[i], it.stuckNote(i))
				}
			}
		}
		for i := 0; i < n; i++ {
			if !ended[i] {
				drawEnd(d, aliases[i], sr.Attempts[i])
			}
		}
	}
	for i := later; i < len(sr.Attempts); i++ {
		a := sr.Attempts[i]
		for _, s := range a.Points {
			d.Step(aliases[i], s)
		}
		drawEnd(d, aliases[i], a)
	}
	return d.String()
}

// drawEnd draws how an attempt ended.
func drawEnd(d *reportfmt.Diagram, who string, a AttemptRecord) {
	switch a.End() {
	case EndCrashedBeforeAck:
		d.Line("Note over %s: returned, then ✗ CRASH before the ack", who)
	case EndCrashed:
		d.Line("Note over %s: ✗ %s", who, outcome(a))
	default:
		d.Line("Note over %s: %s", who, outcome(a))
	}
}
