package twice

import (
	"strings"

	"github.com/twicekit/twicekit/pgfixture"
)

// Generated keys: the values of serial and identity columns, and of every
// column that references one through a foreign key
// (pgfixture.GeneratedKeys), are compared up to one consistent renaming in
// every scenario, as varying values are (varying.go), even with
// ExactValues. A crashed attempt's INSERT rolls back but the sequence value
// it drew is not given back, so the redelivery's row gets the next one: a
// burned value is no difference, while a child row pointing at another
// parent than in the reference run still is. The serial column itself
// prints nowhere (as before: it is a number the database chose); a column
// referencing it prints as ‹key N›.

// keyPart is the part of a row for a generated key's value: the same value
// of the same key is one varying value wherever it stands.
func keyPart(g *varyingGraph, key, v string) varyingPart {
	if v == "NULL" {
		return varyingPart{lit: v, v: -1}
	}
	return varyingPart{v: g.value(key+"="+v, varyingKey)}
}

// hasGeneratedKeys reports whether a snapshot has columns holding
// generated keys.
func hasGeneratedKeys(s *pgfixture.Snapshot) bool { return s != nil && s.HasGeneratedKeys() }

// keyHints say which row each generated key in the differing rows is the
// key of, in the reference run (want) and in the scenario (got): the serial
// column prints nowhere, so ‹key 2› alone would not say which parent a
// child points at.
func keyHints(want, got *canonRun, diff []pgfixture.TableDiff) []string {
	var hints []string
	seen := map[string]bool{}
	say := func(rows []pgfixture.Row, cr *canonRun, where string) {
		for _, r := range rows {
			for _, v := range r.Values {
				for _, m := range markerRe.FindAllString(v, -1) {
					if !strings.HasPrefix(m, markOpen+varyingKey+" ") || seen[m+where] {
						continue
					}
					seen[m+where] = true
					if row, ok := cr.keyRows[m]; ok {
						hints = append(hints, m+" is the key of "+row+" "+where)
					}
				}
			}
		}
	}
	for _, d := range diff {
		say(d.Missing, want, "in the reference run")
		say(d.Extra, got, "here")
	}
	return hints
}
