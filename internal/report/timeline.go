package report

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/internal/sched"
)

// Timeline prints the attempts of a run, one point a line: the attempts
// that ran at once in columns first (see interleaved), then the others one
// after the other.
func Timeline(r Run) string {
	if r.Interleaving != nil {
		return interleaved(r)
	}
	var b strings.Builder
	b.WriteString("timeline:\n")
	for _, a := range r.Attempts {
		if a.Kind != "" {
			fmt.Fprintf(&b, "  %s (%s):\n", a.Name, a.Kind)
		} else {
			fmt.Fprintf(&b, "  %s:\n", a.Name)
		}
		for _, s := range a.Points {
			fmt.Fprintf(&b, "    %3d  %s\n", s.Index, s.Label)
		}
		switch a.End {
		case NotDelivered:
			fmt.Fprintf(&b, "         not delivered: %s\n", a.Note)
		case CrashedBeforeAck:
			b.WriteString("         returned; CRASH before the ack\n")
		case Crashed:
			if a.CrashAt.Index > 0 {
				fmt.Fprintf(&b, "    %3d  CRASH before %s\n", a.CrashAt.Index, a.CrashAt.Label)
			} else {
				fmt.Fprintf(&b, "         CRASH (%s)\n", a.Reason)
			}
		default:
			b.WriteString("         " + a.Outcome + "\n")
		}
		if a.Note != "" && a.End != NotDelivered {
			fmt.Fprintf(&b, "         %s\n", a.Note)
		}
	}
	return b.String()
}

// interleaved prints the concurrent attempts in two columns, one point a
// row in the order the scheduler released them, with the lock waits it
// saw, then the redeliveries one after the other.
func interleaved(r Run) string {
	it := r.Interleaving
	n := r.together()
	recs, later := r.Attempts[:n], r.Attempts[n:]
	type row struct {
		col  int
		text string
	}
	var rows []row
	shown := make([]bool, n)
	for _, e := range it.Events {
		if e.Attempt >= n {
			continue
		}
		switch e.Kind {
		case sched.Released:
			rows = append(rows, row{e.Attempt, fmt.Sprintf("%3d  %s", e.Step.Index, e.Step.Label)})
		case sched.Blocked:
			rows = append(rows, row{e.Attempt, "     ... blocked on " + Letters(e.On)})
		case sched.Returned:
			rows = append(rows, row{e.Attempt, "     " + recs[e.Attempt].Outcome})
			shown[e.Attempt] = true
		}
	}
	for _, s := range it.Stuck {
		rows = append(rows, row{s.Attempt, "     " + s.Note})
	}
	for i, rec := range recs {
		if !shown[i] {
			rows = append(rows, row{i, "     " + rec.Outcome})
		}
	}
	for i, r := range rows {
		if r.col < n-1 { // the last column may run long; the others are cut
			rows[i].text = shorten(r.text, columnLabel+5)
		}
	}
	heads := make([]string, n)
	for i, rec := range recs {
		heads[i] = fmt.Sprintf("%s (%s)", rec.Name, concurrent.Letter(i))
	}
	width := make([]int, n)
	for i, h := range heads {
		width[i] = utf8.RuneCountInString(h) + 2
	}
	for _, r := range rows {
		width[r.col] = max(width[r.col], utf8.RuneCountInString(r.text))
	}
	line := func(col int, text string) string {
		var b strings.Builder
		b.WriteString("  ")
		for i := 0; i < n; i++ {
			cell := ""
			if i == col || col < 0 {
				cell = text
				if col < 0 {
					cell = heads[i]
				}
			}
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(cell)
			if i < n-1 {
				b.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(cell)))
			}
		}
		return strings.TrimRight(b.String(), " ") + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "timeline (schedule %s, %s):\n", it.Schedule, it.Isolation)
	b.WriteString(line(-1, ""))
	for _, r := range rows {
		b.WriteString(line(r.col, r.text))
	}
	var redelivered, followUps []Attempt
	for _, a := range later {
		if a.Kind != "" {
			followUps = append(followUps, a)
		} else {
			redelivered = append(redelivered, a)
		}
	}
	if len(redelivered) > 0 {
		b.WriteString("  then redelivered, one after the other:\n")
		seq := Timeline(Run{Attempts: redelivered})
		b.WriteString(Indent(strings.TrimPrefix(seq, "timeline:\n"), "  "))
	}
	if len(followUps) > 0 {
		b.WriteString("  then the follow-ups it enqueued, one after the other:\n")
		seq := Timeline(Run{Attempts: followUps})
		b.WriteString(Indent(strings.TrimPrefix(seq, "timeline:\n"), "  "))
	}
	return b.String()
}

// columnLabel is how long a point's label may get in a column.
const columnLabel = 52

// shorten cuts s to n runes, marking the cut with an ellipsis.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
