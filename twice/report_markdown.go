package twice

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/sched"
)

// Markdown is the report for a reader and for GitHub: the text report in a
// fenced block, then a Mermaid sequence diagram of each finding's timeline
// (the attempts, PostgreSQL and each effect provider as participants, every
// point, the crash marker, and in concurrent scenarios the lock waits and who
// released them). Like the text, it is a deterministic function of the check.
func (r *Report) Markdown() string { return printableText(r.markdown()) }

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
	d := &diagram{aliases: map[int]string{}}
	together := 0 // the attempts that ran at once, named A, B as in the text
	if sr.interleaving != nil {
		together = min(sr.interleaving.trace.Attempts, len(sr.Attempts))
	}
	for i, a := range sr.Attempts {
		d.aliases[i] = fmt.Sprintf("a%d", i+1)
		name := attemptName(a)
		if i < together {
			name += " (" + concurrent.Letter(i) + ")"
		}
		d.participant(d.aliases[i], name)
	}
	d.participant("pg", "PostgreSQL")
	// Effect providers, in order of first use.
	for _, a := range sr.Attempts {
		for _, s := range a.Points {
			if s.Kind == faults.Effect {
				d.participant(providerAlias(s.Label), providerName(s.Label))
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
			who := d.aliases[e.Attempt]
			switch e.Kind {
			case sched.Released:
				if on, ok := waiting[e.Attempt]; ok {
					for _, h := range on {
						d.line("%s-->>%s: releases the lock", d.aliases[h], who)
					}
					delete(waiting, e.Attempt)
				}
				d.step(who, e.Step)
			case sched.Blocked:
				waiting[e.Attempt] = e.On
				d.line("Note over %s: point %d waits for a lock held by %s", who, e.Step.Index, letterList(e.On))
			case sched.Returned:
				d.end(who, sr.Attempts[e.Attempt])
				ended[e.Attempt] = true
			}
		}
		if it.stuck != nil {
			for _, i := range it.stuck.Stuck {
				if i < n {
					d.line("Note over %s: %s", d.aliases[i], it.stuckNote(i))
				}
			}
		}
		for i := 0; i < n; i++ {
			if !ended[i] {
				d.end(d.aliases[i], sr.Attempts[i])
			}
		}
	}
	for i := later; i < len(sr.Attempts); i++ {
		a := sr.Attempts[i]
		for _, s := range a.Points {
			d.step(d.aliases[i], s)
		}
		d.end(d.aliases[i], a)
	}
	return d.String()
}

type diagram struct {
	aliases map[int]string
	seen    map[string]bool
	heads   []string
	body    []string
}

func (d *diagram) participant(alias, name string) {
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	if d.seen[alias] {
		return
	}
	d.seen[alias] = true
	d.heads = append(d.heads, fmt.Sprintf("participant %s as %s", alias, mermaidText(name)))
}

func (d *diagram) line(format string, args ...any) {
	d.body = append(d.body, mermaidText(fmt.Sprintf(format, args...)))
}

func (d *diagram) step(who string, s faults.Step) {
	label := fmt.Sprintf("%d %s", s.Index, s.Label)
	switch s.Kind {
	case faults.SQL:
		d.line("%s->>pg: %s", who, label)
	case faults.Effect:
		d.line("%s->>%s: %s", who, providerAlias(s.Label), label)
	default:
		d.line("Note over %s: %s", who, label)
	}
}

func (d *diagram) end(who string, a AttemptRecord) {
	switch a.End() {
	case EndCrashedBeforeAck:
		d.line("Note over %s: returned, then ✗ CRASH before the ack", who)
	case EndCrashed:
		d.line("Note over %s: ✗ %s", who, outcome(a))
	default:
		d.line("Note over %s: %s", who, outcome(a))
	}
}

func (d *diagram) String() string {
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	for _, h := range d.heads {
		b.WriteString("    " + h + "\n")
	}
	for _, l := range d.body {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// providerName is the effect provider a point's label names: its first word
// ("email", "payment", "webhook", or a kind of the job's own).
func providerName(label string) string {
	first, _, _ := strings.Cut(label, " ")
	return first
}

// providerAlias is a Mermaid-safe participant name for a provider.
func providerAlias(label string) string {
	var b strings.Builder
	b.WriteString("fx_")
	for _, r := range providerName(label) {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteRune('_')
		}
	}
	return b.String()
}

// mermaidText keeps a line from ending a Mermaid statement early: # and ;
// become Mermaid's entity codes.
func mermaidText(s string) string { return mermaidEscapes.Replace(s) }

var mermaidEscapes = strings.NewReplacer("#", "#35;", ";", "#59;", "\n", " ")
