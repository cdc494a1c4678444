package reportfmt

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/faults"
)

// Diagram is a Mermaid sequenceDiagram being drawn: its participants in the
// order they were named, then its lines.
type Diagram struct {
	seen  map[string]bool
	heads []string
	body  []string
}

// Participant names a participant once: later calls with its alias are
// ignored.
func (d *Diagram) Participant(alias, name string) {
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	if d.seen[alias] {
		return
	}
	d.seen[alias] = true
	d.heads = append(d.heads, fmt.Sprintf("participant %s as %s", alias, mermaidText(name)))
}

// Line adds a line, escaped so that it cannot end a Mermaid statement
// early.
func (d *Diagram) Line(format string, args ...any) {
	d.body = append(d.body, mermaidText(fmt.Sprintf(format, args...)))
}

// Step draws a point of the attempt who: a statement as a message to pg,
// an effect as a message to its provider, any other point as a note.
func (d *Diagram) Step(who string, s faults.Step) {
	label := fmt.Sprintf("%d %s", s.Index, s.Label)
	switch s.Kind {
	case faults.SQL:
		d.Line("%s->>pg: %s", who, label)
	case faults.Effect:
		d.Line("%s->>%s: %s", who, ProviderAlias(s.Label), label)
	default:
		d.Line("Note over %s: %s", who, label)
	}
}

// String is the diagram's text.
func (d *Diagram) String() string {
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

// ProviderName is the effect provider a point's label names: its first word
// ("email", "payment", "webhook", or a kind of the job's own).
func ProviderName(label string) string {
	first, _, _ := strings.Cut(label, " ")
	return first
}

// ProviderAlias is a Mermaid-safe participant name for a provider.
func ProviderAlias(label string) string {
	var b strings.Builder
	b.WriteString("fx_")
	for _, r := range ProviderName(label) {
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
