package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
)

// Placeholders numbers the markers of a finding's text by first appearance,
// per kind: ‹time 1›, ‹uuid 1›, ‹value 1›.
type Placeholders struct {
	names map[string]string
	count map[string]int
}

// NewPlaceholders numbers from 1.
func NewPlaceholders() *Placeholders {
	return &Placeholders{names: map[string]string{}, count: map[string]int{}}
}

// Text rewrites every marker of s as its placeholder.
func (p *Placeholders) Text(s string) string {
	if !strings.Contains(s, markOpen) {
		return s
	}
	return markerRe.ReplaceAllStringFunc(s, func(m string) string {
		if n, ok := p.names[m]; ok {
			return n
		}
		kind := markerRe.FindStringSubmatch(m)[1]
		p.count[kind]++
		n := fmt.Sprintf("‹%s %d›", kind, p.count[kind])
		p.names[m] = n
		return n
	})
}

// Texts rewrites the markers of every string of list.
func (p *Placeholders) Texts(list []string) []string {
	for i := range list {
		list[i] = p.Text(list[i])
	}
	return list
}

// Rows is a copy of rows with the markers of their values rewritten.
func (p *Placeholders) Rows(rows []pgfixture.Row) []pgfixture.Row {
	out := make([]pgfixture.Row, len(rows))
	for i, r := range rows {
		r.Values = p.Texts(slices.Clone(r.Values))
		out[i] = r
	}
	return out
}

// Diffs rewrites, in place, the markers of each table's missing and extra
// rows, table by table.
func (p *Placeholders) Diffs(diffs []pgfixture.TableDiff) {
	for i, d := range diffs {
		d.Missing, d.Extra = p.Rows(d.Missing), p.Rows(d.Extra)
		diffs[i] = d
	}
}

// Mismatches rewrites, in place, the markers of each mismatch's key and
// payload.
func (p *Placeholders) Mismatches(ms []effects.Mismatch) {
	for i, m := range ms {
		m.Key, m.Payload = p.Text(m.Key), p.Text(m.Payload)
		ms[i] = m
	}
}
