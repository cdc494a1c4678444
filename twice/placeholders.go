package twice

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twicekit/twicekit/pgfixture"
)

// placeholders numbers the markers of a finding's text by first appearance,
// per kind: ‹time 1›, ‹uuid 1›, ‹value 1›.
type placeholders struct {
	names map[string]string
	count map[string]int
}

func newPlaceholders() *placeholders {
	return &placeholders{names: map[string]string{}, count: map[string]int{}}
}

func (p *placeholders) text(s string) string {
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

func (p *placeholders) texts(list []string) []string {
	for i := range list {
		list[i] = p.text(list[i])
	}
	return list
}

// number rewrites every marker of a finding as its placeholder, in the
// order the report prints them.
func (p *placeholders) number(f *Finding) {
	f.Headline = p.text(f.Headline)
	f.Timeline = p.text(f.Timeline)
	f.Problems = rewriteProblems(f.Problems, p.texts)
	for i, d := range f.Database {
		d.Missing, d.Extra = p.rows(d.Missing), p.rows(d.Extra)
		f.Database[i] = d
	}
	for i, m := range f.Effects {
		m.Key, m.Payload = p.text(m.Key), p.text(m.Payload)
		f.Effects[i] = m
	}
	f.Hints = p.texts(f.Hints)
	if f.run != nil { // what the Markdown and JSON reports draw: the same placeholders
		f.run = rewriteRun(f.run, p.text, p.text)
	}
}

func (p *placeholders) rows(rows []pgfixture.Row) []pgfixture.Row {
	out := make([]pgfixture.Row, len(rows))
	for i, r := range rows {
		r.Values = p.texts(slices.Clone(r.Values))
		out[i] = r
	}
	return out
}
