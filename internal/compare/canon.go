package compare

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
)

// A marker stands for a varying value in compared text until the report
// numbers it: markOpen kind " " label markClose (printable, so that quoting
// a payload keeps it).
const (
	markOpen  = "⟦"
	markClose = "⟧"
)

var (
	markerRe = regexp.MustCompile(markOpen + `(\w+) ([0-9a-f]+)` + markClose)
	uuidRe   = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	// wordRe splits an effect's text into words: a uuid, a date or time, or
	// a run of letters and digits (joined by . : + -).
	wordRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}` +
		`|\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?` +
		`|[\p{L}\p{N}_]+(?:[.:+-][\p{L}\p{N}_]+)*`)
	timeWordRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}`)
)

// refineRounds is how often a varying value's label takes in its neighbours'.
const refineRounds = 3

// minVaryingText is the shortest varying value replaced in free text (timeline
// labels, errors): shorter ones could be parts of other words.
const minVaryingText = 6

// Canon is a run with its varying values replaced by markers.
type Canon struct {
	snap    *pgfixture.Snapshot
	effects []effects.Effect
	raw     map[string]string   // varying value -> marker
	bare    []string            // varying values replaced in free text, longest first
	types   *pgfixture.Snapshot // the snapshot read, for its column types

	snapSource *pgfixture.Snapshot // the snapshot this run was made from
	copies     *KeyCopies          // the copies of generated keys renamed (generatedkeys.go)
	keyRows    map[string]string   // a generated key's marker -> the row it is the key of
}

// Canon replaces the varying values of a run by markers. A nil Varying (no
// second clean run) replaces only its generated keys. The copies of
// generated keys at the places kc designates are renamed with their keys
// (generatedkeys.go); a nil kc renames none.
func (sh *Varying) Canon(run Run, kc *KeyCopies) *Canon {
	if sh == nil {
		if !hasGeneratedKeys(run.Snapshot) {
			return &Canon{snap: run.Snapshot, effects: run.Effects, types: run.Snapshot}
		}
		sh = &Varying{exact: true, keysOnly: true}
	}
	if sh.ref != nil && run.Snapshot == sh.ref.snapSource && sh.ref.copies == kc {
		return sh.ref
	}
	g := &varyingGraph{index: map[string]int{}}
	cp := newCopier(kc, run.Snapshot)
	// The database: rows as items whose cells are literal or varying values.
	var tables []string
	if run.Snapshot != nil {
		tables = run.Snapshot.Tables()
	}
	rowItems := map[string][]int{}
	for _, t := range tables {
		for _, r := range run.Snapshot.Rows(t) {
			it := varyingItem{head: t, row: true}
			for i, col := range r.Columns {
				v := r.Values[i]
				it.cells = append(it.cells, len(it.parts))
				it.parts = append(it.parts, varyingPart{lit: col + "=", v: -1})
				if key := run.Snapshot.GeneratedKey(t, col); key != "" {
					it.parts = append(it.parts, keyPart(g, key, v))
					continue
				}
				if mayHoldJSON(run.Snapshot.ColumnType(t, col)) && v != "NULL" && !sh.cols[t][col] {
					if parts, ok := sh.jsonParts(g, cp, t, col, v); ok {
						it.parts = append(it.parts, parts...)
						continue
					}
				}
				raw := unquote(v)
				isTime := timeType(run.Snapshot.ColumnType(t, col))
				stable := v == "NULL" || sh.stable[t+"\x00"+col+"\x00"+v]
				random := !sh.keysOnly && (uuidRe.MatchString(raw) || (isTime && sh.nearWall(v))) // never printed raw
				if stable || (!sh.cols[t][col] && !random) {
					if cp.has(rowBase(t, col)) {
						if parts, ok := cp.textParts(g, rowBase(t, col), v); ok {
							it.parts = append(it.parts, parts...)
							continue
						}
					}
					it.parts = append(it.parts, varyingPart{lit: v, v: -1})
					continue
				}
				kind := varyingValue
				switch {
				case isTime:
					kind = varyingTime
				case uuidRe.MatchString(raw):
					kind = varyingUUID
				}
				it.parts = append(it.parts, varyingPart{v: g.value(raw, kind)})
			}
			rowItems[t] = append(rowItems[t], g.add(it))
		}
	}
	// The effects: their words, varying where the clean runs differed, where
	// they are a varying value of the database, or where they look random.
	effItems := make([]int, len(run.Effects))
	effParts := make([]words, len(run.Effects))
	for i, e := range run.Effects {
		w := effectWords(e)
		effParts[i] = w
		fresh := sh.words[e.Kind+"\x00"+w.skeleton]
		copies := cp.has(effectBase(e.Kind))
		it := varyingItem{head: e.Kind}
		for j, word := range w.words {
			it.parts = append(it.parts, varyingPart{lit: w.seps[j], v: -1})
			if copies && !fresh[j] {
				if k := cp.key(tokenPlace(effectBase(e.Kind), w.skeleton, j), word); k != "" {
					it.parts = append(it.parts, keyPart(g, k, word))
					continue
				}
			}
			_, known := g.index[word]
			isTime := timeWordRe.MatchString(word)
			random := !sh.keysOnly && !sh.same[word] && (uuidRe.MatchString(word) || (isTime && sh.nearWall(word)))
			if !fresh[j] && !known && !random {
				it.parts = append(it.parts, varyingPart{lit: word, v: -1})
				continue
			}
			kind := varyingValue
			switch {
			case uuidRe.MatchString(word):
				kind = varyingUUID
			case isTime:
				kind = varyingTime
			}
			it.parts = append(it.parts, varyingPart{v: g.value(word, kind)})
		}
		it.parts = append(it.parts, varyingPart{lit: w.seps[len(w.words)], v: -1})
		effItems[i] = g.add(it)
	}
	marks := g.markers(sh.exact)
	cr := &Canon{raw: map[string]string{}, keyRows: map[string]string{}, snapSource: run.Snapshot, copies: kc}
	for raw, i := range g.index {
		cr.raw[raw] = marks[i]
		if len(raw) >= minVaryingText && g.kinds[i] != varyingKey {
			cr.bare = append(cr.bare, raw)
		}
	}
	slices.SortFunc(cr.bare, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	rows := map[string][]pgfixture.Row{}
	for _, t := range tables {
		rows[t] = []pgfixture.Row{}
		var cols []string
		shown := map[int]bool{}
		if ids := rowItems[t]; len(ids) > 0 {
			for c, col := range run.Snapshot.Rows(t)[0].Columns {
				if run.Snapshot.GeneratedKey(t, col) != t+"."+col {
					cols = append(cols, col)
					shown[c] = true
				}
			}
		}
		for _, id := range rowItems[t] {
			it := g.items[id]
			r := pgfixture.Row{Columns: cols}
			for c, start := range it.cells {
				if !shown[c] {
					continue
				}
				end := len(it.parts)
				if c+1 < len(it.cells) {
					end = it.cells[c+1]
				}
				var b strings.Builder
				for _, p := range it.parts[start+1 : end] {
					b.WriteString(p.text(marks))
				}
				r.Values = append(r.Values, b.String())
			}
			for c, start := range it.cells {
				if !shown[c] && it.parts[start+1].v >= 0 {
					cr.keyRows[marks[it.parts[start+1].v]] = t + " " + r.String()
				}
			}
			rows[t] = append(rows[t], r)
		}
	}
	cr.snap = pgfixture.NewSnapshot(rows)
	cr.types = run.Snapshot
	for i, e := range run.Effects {
		var b strings.Builder
		for _, p := range g.items[effItems[i]].parts {
			b.WriteString(p.text(marks))
		}
		text := b.String()
		if effParts[i].keyed {
			e.Key, e.Payload, _ = strings.Cut(text, "\x1f")
		} else {
			e.Payload = text
		}
		cr.effects = append(cr.effects, e)
	}
	return cr
}

// Snapshot is the run's rows in canonical form.
func (cr *Canon) Snapshot() *pgfixture.Snapshot { return cr.snap }

// Effects is the run's effect log in canonical form.
func (cr *Canon) Effects() []effects.Effect { return cr.effects }

// jsonParts are the parts of a JSON value: its text, with the leaves that
// vary (by path, or looking random) replaced by varying values, quoted so
// that the text stays JSON, and the words of other leaves copying a
// generated key (cp) replaced by the key's values; ok is false when v is
// not JSON.
func (sh *Varying) jsonParts(g *varyingGraph, cp *copier, t, col, v string) ([]varyingPart, bool) {
	leaves, ok := jsonLeaves(v)
	if !ok {
		return nil, false
	}
	copies := cp.has(jsonBase(t, col))
	var parts []varyingPart
	last := 0
	for _, l := range leaves {
		isTime := l.str && timeWordRe.MatchString(l.value)
		random := !sh.keysOnly && l.str && (uuidRe.MatchString(l.value) || (isTime && sh.nearWall(l.value)))
		if sh.stable[t+"\x00"+col+"."+l.path+"\x00"+l.raw] || (!sh.json[t+"\x00"+col][l.path] && !random) {
			if !copies {
				continue
			}
			text, ok := leafText(l)
			if !ok {
				continue
			}
			words, ok := cp.textParts(g, jsonPlace(t, col, l.path), text)
			if !ok {
				continue
			}
			// quoted (a number too), so that the text stays JSON
			parts = append(parts, varyingPart{lit: v[last:l.start] + `"`, v: -1})
			parts = append(parts, words...)
			parts = append(parts, varyingPart{lit: `"`, v: -1})
			last = l.end
			continue
		}
		kind := varyingValue
		switch {
		case isTime:
			kind = varyingTime
		case l.str && uuidRe.MatchString(l.value):
			kind = varyingUUID
		}
		parts = append(parts, varyingPart{lit: v[last:l.start] + `"`, v: -1}, varyingPart{v: g.value(l.value, kind)}, varyingPart{lit: `"`, v: -1})
		last = l.end
	}
	return append(parts, varyingPart{lit: v[last:], v: -1}), true
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

// varyingGraph links the varying values of a run to the rows and effects they
// appear in.
type varyingGraph struct {
	index map[string]int // raw value -> id
	kinds []string
	occ   [][]int // value id -> item ids
	items []varyingItem
}

type varyingItem struct {
	head  string // the table or effect kind
	parts []varyingPart
	row   bool  // a row of the database
	cells []int // a row's: where each column's parts begin (its "col=")
}

// varyingPart is literal text (v < 0) or varying value v.
type varyingPart struct {
	lit string
	v   int
}

func (p varyingPart) text(marks []string) string {
	if p.v < 0 {
		return p.lit
	}
	return marks[p.v]
}

// value returns the id of a varying value, adding it.
func (g *varyingGraph) value(raw, kind string) int {
	if i, ok := g.index[raw]; ok {
		return i
	}
	g.index[raw] = len(g.kinds)
	g.kinds = append(g.kinds, kind)
	g.occ = append(g.occ, nil)
	return len(g.kinds) - 1
}

func (g *varyingGraph) add(it varyingItem) int {
	id := len(g.items)
	g.items = append(g.items, it)
	for _, p := range it.parts {
		if p.v >= 0 && (len(g.occ[p.v]) == 0 || g.occ[p.v][len(g.occ[p.v])-1] != id) {
			g.occ[p.v] = append(g.occ[p.v], id)
		}
	}
	return id
}

// markers labels every varying value by where it stands, refined through its
// neighbours; exact labels each by the value itself. A value in the
// database is labelled by the rows it stands in alone (effects compare
// under their policies: an email the policy lets go missing must not change
// the label of the time it carried); a value only effects carry, by them.
func (g *varyingGraph) markers(exact bool) []string {
	inRows := make([]bool, len(g.kinds))
	for v, occ := range g.occ {
		for _, id := range occ {
			inRows[v] = inRows[v] || g.items[id].row
		}
	}
	raws := make([]string, len(g.kinds))
	for raw, i := range g.index {
		raws[i] = raw
	}
	labels := make([]string, len(g.kinds))
	// fixed: a value labelled by itself (every value but generated keys,
	// when exact).
	fixed := func(v int) bool { return exact && g.kinds[v] != varyingKey }
	refine := !exact
	for v := range labels {
		if fixed(v) {
			labels[v] = hash(g.kinds[v], raws[v])
		} else {
			refine = true
		}
	}
	for round := 0; round < refineRounds && refine; round++ {
		next := make([]string, len(labels))
		for v := range labels {
			if fixed(v) {
				next[v] = labels[v]
				continue
			}
			descs := make([]string, 0, len(g.occ[v]))
			for _, id := range g.occ[v] {
				it := g.items[id]
				if inRows[v] && !it.row {
					continue
				}
				var b strings.Builder
				b.WriteString(it.head)
				for _, p := range it.parts {
					b.WriteByte(0)
					switch {
					case p.v < 0:
						b.WriteString(p.lit)
					case p.v == v:
						b.WriteString("*")
					default:
						b.WriteString("?" + labels[p.v])
					}
				}
				descs = append(descs, b.String())
			}
			slices.Sort(descs)
			next[v] = hash(g.kinds[v], labels[v], strings.Join(descs, "\x01"))
		}
		labels = next
	}
	marks := make([]string, len(labels))
	for v := range labels {
		marks[v] = markOpen + g.kinds[v] + " " + labels[v] + markClose
	}
	return marks
}

func hash(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x02")))
	return hex.EncodeToString(h[:8])
}

// Text replaces the run's varying values in free text (a label, an error) by
// their markers, where they stand alone.
func (cr *Canon) Text(s string) string {
	for _, raw := range cr.bare {
		if !strings.Contains(s, raw) {
			continue
		}
		var b strings.Builder
		rest := s
		for {
			i := strings.Index(rest, raw)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			end := i + len(raw)
			alone := (i == 0 || !keyByte(rest[i-1])) && (end == len(rest) || !keyByte(rest[end]))
			b.WriteString(rest[:i])
			if alone {
				b.WriteString(cr.raw[raw])
			} else {
				b.WriteString(raw)
			}
			rest = rest[end:]
		}
		s = b.String()
	}
	return s
}

// Texts replaces the run's varying values in every string of list.
func (cr *Canon) Texts(list []string) []string {
	for i := range list {
		list[i] = cr.Text(list[i])
	}
	return list
}

// Rejected returns the provider's rejections with varying values marked.
func (cr *Canon) Rejected(rs []effects.Rejection) []effects.Rejection {
	out := make([]effects.Rejection, len(rs))
	for i, r := range rs {
		r.First, r.Got = cr.Text(r.First), cr.Text(r.Got)
		out[i] = r
	}
	return out
}
