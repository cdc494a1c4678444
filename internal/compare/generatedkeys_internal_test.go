package compare

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Only whole words copy a key, and only at the places the reference run
// designated for that key.
func TestKeyCopiesAreWholeWords(t *testing.T) {
	base := rowBase("reminders", "note")
	text := "invoice #2 of 12 in 2.5 days, 2 left"
	locs := wordRe.FindAllStringIndex(text, -1)
	skel := skeleton(text, locs)
	kc := &KeyCopies{places: map[string][]string{tokenPlace(base, skel, 1): {"invoices.id"}}, bases: map[string]bool{base: true}}
	cp := &copier{kc: kc, vals: map[string][]string{"2": {"invoices.id"}, "12": {"invoices.id"}}}
	g := &varyingGraph{index: map[string]int{}}
	parts, ok := cp.textParts(g, base, text)
	require.True(t, ok)
	var b strings.Builder
	for _, p := range parts {
		if p.v >= 0 {
			b.WriteString("<" + g.kinds[p.v] + ">")
			continue
		}
		b.WriteString(p.lit)
	}
	// The trailing "2 left" is a value of the key too, but at a place the
	// reference run did not copy it.
	require.Equal(t, "invoice #<key> of 12 in 2.5 days, 2 left", b.String())
	_, ok = cp.textParts(g, base, "invoice #7 of 12")
	require.False(t, ok, "7 is no value of the key in this run")
}
