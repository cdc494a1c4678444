package compare

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
)

// Generated keys: the values of serial and identity columns, and of every
// column that references one through a foreign key
// (pgfixture.GeneratedKeys), are compared up to one consistent renaming in
// every scenario, as varying values are (varying.go), even with
// twice.ExactValues. A crashed attempt's INSERT rolls back but the sequence
// value it drew is not given back, so the redelivery's row gets the next one: a
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

// KeyHints say which row each generated key in the differing rows and
// effects is the key of, in the reference run (want) and in the scenario
// (got): the serial column prints nowhere, so ‹key 2› alone would not say
// which parent a child points at. An effect made more often than in the
// reference run names its keys' rows here, any other in the reference run.
func KeyHints(want, got *Canon, diff []pgfixture.TableDiff, mismatches []effects.Mismatch) []string {
	var hints []string
	seen := map[string]bool{}
	say := func(v string, cr *Canon, where string) {
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
	sayRows := func(rows []pgfixture.Row, cr *Canon, where string) {
		for _, r := range rows {
			for _, v := range r.Values {
				say(v, cr, where)
			}
		}
	}
	for _, d := range diff {
		sayRows(d.Missing, want, "in the reference run")
		sayRows(d.Extra, got, "here")
	}
	for _, m := range mismatches {
		if m.Got > m.Want {
			say(m.Key+" "+m.Payload, got, "here")
		} else {
			say(m.Key+" "+m.Payload, want, "in the reference run")
		}
	}
	return hints
}

// Copies of generated keys: a key's value written somewhere else than its
// own column and its foreign-key referrers (a trigger's row_to_json(NEW) in
// a jsonb column, a column without a foreign key, a follow-up's args, an
// email saying "invoice #2") is renamed with the key it copies, in the same
// run. The rule has four parts.
//
// A place is where a token stands: a table's column, a JSON column's leaf
// (by path), or an effect kind's text; with the text's skeleton (its words
// blanked) and the token's position among its words. A token is a whole
// word (wordRe): the 2 of "invoice #2", never of "12" or "2.5".
//
// The reference run designates the places: a place copies key K when one of
// its tokens in the reference run equals a value of K there. A place may
// copy several keys; they are tried in order: the key matching most of its
// tokens, then a key of another table than the place's, then (for an
// effect's place) the key that most places of rows try first, then by
// name.
//
// A scenario confirms the places: a place (and a key of it) stays
// designated when the scenario too holds a value of the key there. Both
// runs then rename a token at a designated place when it equals a value of
// one of the place's keys in that run: it becomes that key's value, the
// same varying value as in the key's own column (the first key in order
// that holds it).
//
// A small number that is no key can equal a key's value by chance and be
// renamed in one run but not in another. So a scenario that differs with
// the copies renamed is compared again as before (copies raw), and passes
// when it is equal so. When it differs both ways, the report shows the way
// with fewer differing tables and effects (the copies renamed on a tie).
//
// The limits. A place holding copies of two keys whose values overlap may
// pick another key in a scenario than in the reference (a false alarm). A
// number that is no key but equals a key's value in both runs, moved by a
// burned value, may hide a difference (a missed bug). A JSON string with
// escapes is compared raw. The timeline's labels print key values raw.

// KeyCopies are the places where the reference run copies generated keys.
type KeyCopies struct {
	places map[string][]string // place -> the keys it copies, in order
	bases  map[string]bool     // a place's column ("r"/"j" table column) or effect kind ("e" kind)
}

// keyValues maps each value of a serial or identity column of a snapshot
// to the keys ("table.column") holding it.
func keyValues(s *pgfixture.Snapshot) map[string][]string {
	vals := map[string][]string{}
	for _, t := range s.Tables() {
		rows := s.Rows(t)
		if len(rows) == 0 {
			continue
		}
		for i, col := range rows[0].Columns {
			key := t + "." + col
			if s.GeneratedKey(t, col) != key {
				continue
			}
			for _, r := range rows {
				if v := r.Values[i]; v != "NULL" && !slices.Contains(vals[v], key) {
					vals[v] = append(vals[v], key)
				}
			}
		}
	}
	return vals
}

// Place bases: a table's plain column, a JSON column's leaf, an effect kind.
func rowBase(t, col string) string         { return "r\x00" + t + "\x00" + col }
func jsonBase(t, col string) string        { return "j\x00" + t + "\x00" + col }
func jsonPlace(t, col, path string) string { return jsonBase(t, col) + "\x00" + path }
func effectBase(kind string) string        { return "e\x00" + kind }

// FindKeyCopies designates the places where the reference run copies its
// generated keys; nil when it copies none.
func FindKeyCopies(ref Run) *KeyCopies {
	if !hasGeneratedKeys(ref.Snapshot) {
		return nil
	}
	vals := keyValues(ref.Snapshot)
	if len(vals) == 0 {
		return nil
	}
	count, owner := countCopies(ref, vals, nil)
	if len(count) == 0 {
		return nil
	}
	kc := &KeyCopies{places: map[string][]string{}, bases: map[string]bool{}}
	first := map[string]int{} // key -> the row places trying it first
	order := func(place string, primary bool) {
		byKey := count[place]
		keys := slices.Collect(maps.Keys(byKey))
		other := func(k string) bool { return owner[place] == "" || !strings.HasPrefix(k, owner[place]+".") }
		slices.SortFunc(keys, func(a, b string) int {
			if c := cmp.Compare(byKey[b], byKey[a]); c != 0 {
				return c
			}
			if oa, ob := other(a), other(b); oa != ob {
				if oa {
					return -1
				}
				return 1
			}
			if c := cmp.Compare(first[b], first[a]); primary && c != 0 {
				return c
			}
			return strings.Compare(a, b)
		})
		kc.places[place] = keys
		base, _, _ := strings.Cut(place, "\x01")
		if strings.HasPrefix(base, "j\x00") {
			base = base[:strings.LastIndexByte(base, 0)]
		}
		kc.bases[base] = true
	}
	places := slices.Sorted(maps.Keys(count))
	for _, place := range places {
		if owner[place] != "" {
			order(place, false)
			first[kc.places[place][0]]++
		}
	}
	for _, place := range places {
		if owner[place] == "" {
			order(place, true)
		}
	}
	return kc
}

// countCopies counts, per place of a run and key, the words there equal to
// a value of the key (vals); with bases, only in those columns and effect
// kinds. owner is each place's table ("" for an effect's).
func countCopies(run Run, vals map[string][]string, bases map[string]bool) (count map[string]map[string]int, owner map[string]string) {
	count, owner = map[string]map[string]int{}, map[string]string{}
	note := func(place, table, word string) {
		for _, k := range vals[word] {
			if count[place] == nil {
				count[place] = map[string]int{}
				owner[place] = table
			}
			count[place][k]++
		}
	}
	noteText := func(base, table, text string) {
		locs := wordRe.FindAllStringIndex(text, -1)
		skel := ""
		for j, m := range locs {
			if w := text[m[0]:m[1]]; len(vals[w]) > 0 {
				if skel == "" {
					skel = skeleton(text, locs)
				}
				note(tokenPlace(base, skel, j), table, w)
			}
		}
	}
	in := func(base string) bool { return bases == nil || bases[base] }
	s := run.Snapshot
	for _, t := range s.Tables() {
		rows := s.Rows(t)
		if len(rows) == 0 {
			continue
		}
		for i, col := range rows[0].Columns {
			if s.GeneratedKey(t, col) != "" || !in(rowBase(t, col)) && !in(jsonBase(t, col)) {
				continue
			}
			isJSON := mayHoldJSON(s.ColumnType(t, col))
			for _, r := range rows {
				v := r.Values[i]
				if v == "NULL" || !strings.ContainsAny(v, "0123456789") {
					continue
				}
				if isJSON {
					if leaves, ok := jsonLeaves(v); ok {
						for _, l := range leaves {
							if text, ok := leafText(l); ok {
								noteText(jsonPlace(t, col, l.path), t, text)
							}
						}
						continue
					}
				}
				noteText(rowBase(t, col), t, v)
			}
		}
	}
	for _, e := range run.Effects {
		if !in(effectBase(e.Kind)) {
			continue
		}
		w := effectWords(e)
		for j, word := range w.words {
			if len(vals[word]) > 0 {
				note(tokenPlace(effectBase(e.Kind), w.skeleton, j), "", word)
			}
		}
	}
	return count, owner
}

// confirmed is kc without the places (and keys of a place) where the
// scenario holds no value of the key: a number the reference run's key
// equals by chance ("in 2 days") is then compared raw in both runs. It is
// kc itself when the scenario confirms every place, so that the reference
// run's canonical form is made once.
func (kc *KeyCopies) confirmed(run Run) *KeyCopies {
	if kc == nil || run.Snapshot == nil {
		return kc
	}
	count, _ := countCopies(run, keyValues(run.Snapshot), kc.bases)
	var out *KeyCopies
	for _, place := range slices.Sorted(maps.Keys(kc.places)) {
		keys := kc.places[place]
		kept := slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return count[place][k] == 0 })
		if len(kept) == len(keys) {
			continue
		}
		if out == nil {
			out = &KeyCopies{places: maps.Clone(kc.places), bases: kc.bases}
		}
		if len(kept) == 0 {
			delete(out.places, place)
		} else {
			out.places[place] = kept
		}
	}
	if out == nil {
		return kc
	}
	return out
}

// tokenPlace is the place of the j-th word of a text with that skeleton.
func tokenPlace(base, skel string, j int) string {
	return base + "\x01" + skel + "\x01" + strconv.Itoa(j)
}

// skeleton is text with its words (at locs) blanked.
func skeleton(text string, locs [][]int) string {
	var b strings.Builder
	last := 0
	for _, m := range locs {
		b.WriteString(text[last:m[0]])
		b.WriteByte(0)
		last = m[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// leafText is the text of a JSON leaf whose words may be copies: a number
// as printed, a string's content when it has no escapes; ok is false for
// any other leaf.
func leafText(l jsonLeaf) (string, bool) {
	if !l.str {
		return l.raw, l.raw != "true" && l.raw != "false" && l.raw != "null"
	}
	if strings.ContainsRune(l.raw, '\\') {
		return "", false
	}
	return l.value, true
}

// copier renames the copies of one run's generated keys.
type copier struct {
	kc   *KeyCopies
	vals map[string][]string // the run's key values
}

// newCopier is nil (renaming nothing) when kc designates no place.
func newCopier(kc *KeyCopies, s *pgfixture.Snapshot) *copier {
	if kc == nil || s == nil {
		return nil
	}
	return &copier{kc: kc, vals: keyValues(s)}
}

// has reports whether a column or effect kind (a base) holds copies.
func (c *copier) has(base string) bool { return c != nil && c.kc.bases[base] }

// key is the key a word at a place copies in this run, "" for none.
func (c *copier) key(place, word string) string {
	have := c.vals[word]
	if len(have) == 0 {
		return ""
	}
	for _, k := range c.kc.places[place] {
		if slices.Contains(have, k) {
			return k
		}
	}
	return ""
}

// textParts are the parts of a text at base: literal, but for the words
// copying a key, which are that key's values; ok is false when none does.
func (c *copier) textParts(g *varyingGraph, base, text string) (parts []varyingPart, ok bool) {
	locs := wordRe.FindAllStringIndex(text, -1)
	skel, last := "", 0
	for j, m := range locs {
		w := text[m[0]:m[1]]
		if len(c.vals[w]) == 0 {
			continue
		}
		if skel == "" {
			skel = skeleton(text, locs)
		}
		k := c.key(tokenPlace(base, skel, j), w)
		if k == "" {
			continue
		}
		parts = append(parts, varyingPart{lit: text[last:m[0]], v: -1}, keyPart(g, k, w))
		last, ok = m[1], true
	}
	if !ok {
		return nil, false
	}
	return append(parts, varyingPart{lit: text[last:], v: -1}), true
}
