package twice

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
)

// Values that differ between two clean runs.
//
// The check runs the clean reference twice, the second time on the same
// database reset and seeded again, with the check's clock at the same start.
// A column whose values differ between the two runs (an explicit now(),
// gen_random_uuid(), a time.Now() or a random uuid made in Go), and a word of
// an effect's key or payload that differs between them, holds values the job
// does not decide: fresh values. Every scenario is then compared by shape:
// each fresh value of a run is replaced by a label computed from where it
// stands (the rows and effects it appears in, with the other fresh values
// replaced by their own labels, refined three times), so two runs compare
// equal exactly when one consistent renaming of their fresh values makes them
// equal (up to the rare structures that such refinement cannot tell apart): a
// NULL stays a NULL, the same uuid written to two tables must be the same
// uuid in both, and swapping which row gets which uuid is a difference.
// Values the job computes from a.Now() are the same in both clean runs and
// still compare exactly. In reports, fresh values print as ‹time N›, ‹uuid N›
// or ‹value N›, numbered by first appearance, never raw.

// ExactValues switches off the comparison by shape: every column value and
// effect payload is compared exactly, even those that differ between two
// clean runs (so a job writing now() differs from its reference in every
// scenario, and the report's hint says which column). Such values still
// print as placeholders, never raw. Use it for a job that promises to write
// exactly the same values on every delivery.
func ExactValues() Option {
	return optionFunc(func(c *config) { c.exactValues = true })
}

// The kinds of fresh values, as their placeholders name them.
const (
	freshTime  = "time"
	freshUUID  = "uuid"
	freshValue = "value"
)

// A marker stands for a fresh value in compared text until the report
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

// refineRounds is how often a fresh value's label takes in its neighbours'.
const refineRounds = 3

// minFreshText is the shortest fresh value replaced in free text (timeline
// labels, errors): shorter ones could be parts of other words.
const minFreshText = 6

// wallMargin: a time value within this of the wall clock while the
// reference ran is taken from the wall clock even when both clean runs
// happened to write the same one (a now() truncated to the second or day).
const wallMargin = 36 * time.Hour

// shapes is what the two clean runs showed: which columns and effect words
// hold fresh values.
type shapes struct {
	exact  bool
	cols   map[string]map[string]bool // table -> column -> fresh values
	stable map[string]bool            // table \x00 column \x00 value: the same in both clean runs
	words  map[string]map[int]bool    // effect kind \x00 skeleton -> positions of fresh words
	same   map[string]bool            // effect words that both clean runs sent
	wall   [2]time.Time               // the wall clock around the first clean run
	clock  [2]time.Time               // the check's clock, from its start to its latest redrive
	found  []string
	ref    *canonRun
}

// canonRun is a run with its fresh values replaced by markers.
type canonRun struct {
	snap    *pgfixture.Snapshot
	effects []effects.Effect
	raw     map[string]string   // fresh value -> marker
	bare    []string            // fresh values replaced in free text, longest first
	types   *pgfixture.Snapshot // the snapshot read, for its column types

	snapSource *pgfixture.Snapshot // the snapshot this run was made from
}

// secondReference runs the clean reference again and records in ref which
// values differ between the two runs. A second run that does not succeed
// cleanly leaves the comparison exact.
func (c *checker) secondReference(ctx context.Context, ref *ScenarioRun, rep *Report) error {
	if c.cfg.oneReference {
		return nil
	}
	wall0 := time.Now()
	again, err := c.scenario(ctx, Scenario{Kind: Once}, playArgs{})
	if err != nil {
		return err
	}
	wall1 := time.Now()
	ref.Sessions = mergeSessions(ref.Sessions, again.Sessions)
	if len(again.Attempts) != 1 || referenceFinding(again, again.Attempts[0], nil, queueConfig{}) != nil || again.Attempts[0].Err != nil {
		return nil
	}
	latest := c.cfg.start
	for _, d := range c.cfg.redrives {
		latest = latest.Add(d)
	}
	sh := detectShapes(ref, again, [2]time.Time{wall0, wall1}, [2]time.Time{c.cfg.start, latest})
	sh.exact = c.cfg.exactValues
	sh.ref = sh.canon(ref)
	ref.shapes = sh
	rep.Nondeterministic = sh.found
	return nil
}

// detectShapes compares two clean runs.
func detectShapes(a, b *ScenarioRun, wall, clock [2]time.Time) *shapes {
	sh := &shapes{cols: map[string]map[string]bool{}, stable: map[string]bool{}, words: map[string]map[int]bool{}, same: map[string]bool{}, wall: wall, clock: clock}
	tables := map[string]bool{}
	for _, t := range a.Snapshot.Tables() {
		tables[t] = true
	}
	for _, t := range b.Snapshot.Tables() {
		tables[t] = true
	}
	for _, t := range slices.Sorted(maps.Keys(tables)) {
		ra, rb := a.Snapshot.Rows(t), b.Snapshot.Rows(t)
		var cols []string
		switch {
		case len(ra) > 0:
			cols = ra[0].Columns
		case len(rb) > 0:
			cols = rb[0].Columns
		}
		for i, col := range cols {
			va, vb := columnValues(ra, i), columnValues(rb, i)
			isTime := timeType(a.Snapshot.ColumnType(t, col))
			fresh := !slices.Equal(va, vb)
			inB := map[string]bool{}
			for _, v := range vb {
				inB[v] = true
			}
			for _, v := range va {
				if isTime && sh.nearWall(v) {
					fresh = true
					continue
				}
				if inB[v] {
					sh.stable[t+"\x00"+col+"\x00"+v] = true
				}
			}
			if fresh {
				if sh.cols[t] == nil {
					sh.cols[t] = map[string]bool{}
				}
				sh.cols[t][col] = true
				sh.found = append(sh.found, fmt.Sprintf("%s.%s", t, col))
			}
		}
	}
	for _, e := range b.Effects {
		for _, w := range effectWords(e).words {
			sh.same[w] = true
		}
	}
	if len(a.Effects) == len(b.Effects) {
		for i, ea := range a.Effects {
			eb := b.Effects[i]
			wa, wb := effectWords(ea), effectWords(eb)
			if ea.Kind != eb.Kind || wa.skeleton != wb.skeleton {
				continue
			}
			for j, w := range wa.words {
				if w == wb.words[j] && !(timeWordRe.MatchString(w) && sh.nearWall(w)) {
					continue
				}
				key := ea.Kind + "\x00" + wa.skeleton
				if sh.words[key] == nil {
					sh.words[key] = map[int]bool{}
				}
				if !sh.words[key][j] {
					sh.words[key][j] = true
					sh.found = append(sh.found, fmt.Sprintf("%s effect %s: word %d", ea.Kind, effectTarget(ea), j+1))
				}
			}
		}
	}
	return sh
}

func columnValues(rows []pgfixture.Row, i int) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		if i < len(r.Values) {
			out = append(out, r.Values[i])
		}
	}
	slices.Sort(out)
	return out
}

func effectTarget(e effects.Effect) string {
	if e.Key == "" || e.Kind == effects.KindPayment {
		return "payload"
	}
	return e.Key
}

// timeType reports whether a PostgreSQL type name is a date or time type.
func timeType(name string) bool {
	switch name {
	case "timestamptz", "timestamp", "date", "time", "timetz":
		return true
	}
	return false
}

// nearWall reports whether a printed time lies near the wall clock while
// the first clean run ran, and not near the check's clock.
func (sh *shapes) nearWall(v string) bool {
	v = strings.Trim(v, "'")
	var t time.Time
	var err error
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err = time.Parse(layout, v); err == nil {
			break
		}
	}
	if err != nil {
		return false
	}
	near := func(from, to time.Time) bool {
		return !t.Before(from.Add(-wallMargin)) && !t.After(to.Add(wallMargin))
	}
	return near(sh.wall[0], sh.wall[1]) && !near(sh.clock[0], sh.clock[1])
}

// words is an effect's text split into words and what lies between them.
type words struct {
	words    []string
	skeleton string // the text with every word replaced by \x00
	seps     []string
	keyed    bool // the text begins with the effect's key and \x1f
}

// effectWords splits an effect's key (but a payment's: an Idempotency-Key
// is no part of what the world sees) and payload into words.
func effectWords(e effects.Effect) words {
	text, keyed := e.Payload, false
	if e.Kind != effects.KindPayment {
		text, keyed = e.Key+"\x1f"+e.Payload, true
	}
	w := words{keyed: keyed}
	last := 0
	var skel strings.Builder
	for _, m := range wordRe.FindAllStringIndex(text, -1) {
		w.seps = append(w.seps, text[last:m[0]])
		w.words = append(w.words, text[m[0]:m[1]])
		skel.WriteString(text[last:m[0]])
		skel.WriteByte(0)
		last = m[1]
	}
	w.seps = append(w.seps, text[last:])
	skel.WriteString(text[last:])
	w.skeleton = skel.String()
	return w
}

// canon replaces the fresh values of a run by markers. A nil shapes (no
// second clean run) leaves the run as it is.
func (sh *shapes) canon(sr *ScenarioRun) *canonRun {
	if sh == nil {
		return &canonRun{snap: sr.Snapshot, effects: sr.Effects, types: sr.Snapshot}
	}
	if sh.ref != nil && sr.Snapshot == sh.ref.snapSource {
		return sh.ref
	}
	g := &freshGraph{index: map[string]int{}}
	// The database: rows as items whose cells are literal or fresh values.
	var tables []string
	if sr.Snapshot != nil {
		tables = sr.Snapshot.Tables()
	}
	rowItems := map[string][]int{}
	for _, t := range tables {
		for _, r := range sr.Snapshot.Rows(t) {
			it := freshItem{head: t, row: true}
			for i, col := range r.Columns {
				v := r.Values[i]
				it.parts = append(it.parts, freshPart{lit: col + "=", v: -1})
				raw := unquote(v)
				isTime := timeType(sr.Snapshot.ColumnType(t, col))
				stable := v == "NULL" || sh.stable[t+"\x00"+col+"\x00"+v]
				random := uuidRe.MatchString(raw) || (isTime && sh.nearWall(v)) // never printed raw
				if stable || (!sh.cols[t][col] && !random) {
					it.parts = append(it.parts, freshPart{lit: v, v: -1})
					continue
				}
				kind := freshValue
				switch {
				case isTime:
					kind = freshTime
				case uuidRe.MatchString(raw):
					kind = freshUUID
				}
				it.parts = append(it.parts, freshPart{v: g.value(raw, kind)})
			}
			rowItems[t] = append(rowItems[t], g.add(it))
		}
	}
	// The effects: their words, fresh where the clean runs differed, where
	// they are a fresh value of the database, or where they look random.
	effItems := make([]int, len(sr.Effects))
	effParts := make([]words, len(sr.Effects))
	for i, e := range sr.Effects {
		w := effectWords(e)
		effParts[i] = w
		fresh := sh.words[e.Kind+"\x00"+w.skeleton]
		it := freshItem{head: e.Kind}
		for j, word := range w.words {
			it.parts = append(it.parts, freshPart{lit: w.seps[j], v: -1})
			_, known := g.index[word]
			isTime := timeWordRe.MatchString(word)
			random := !sh.same[word] && (uuidRe.MatchString(word) || (isTime && sh.nearWall(word)))
			if !fresh[j] && !known && !random {
				it.parts = append(it.parts, freshPart{lit: word, v: -1})
				continue
			}
			kind := freshValue
			switch {
			case uuidRe.MatchString(word):
				kind = freshUUID
			case isTime:
				kind = freshTime
			}
			it.parts = append(it.parts, freshPart{v: g.value(word, kind)})
		}
		it.parts = append(it.parts, freshPart{lit: w.seps[len(w.words)], v: -1})
		effItems[i] = g.add(it)
	}
	marks := g.markers(sh.exact)
	cr := &canonRun{raw: map[string]string{}, snapSource: sr.Snapshot}
	for raw, i := range g.index {
		cr.raw[raw] = marks[i]
		if len(raw) >= minFreshText {
			cr.bare = append(cr.bare, raw)
		}
	}
	slices.SortFunc(cr.bare, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	rows := map[string][]pgfixture.Row{}
	for _, t := range tables {
		rows[t] = []pgfixture.Row{}
		var cols []string
		if ids := rowItems[t]; len(ids) > 0 {
			cols = sr.Snapshot.Rows(t)[0].Columns
		}
		for _, id := range rowItems[t] {
			it := g.items[id]
			r := pgfixture.Row{Columns: cols}
			for k := 1; k < len(it.parts); k += 2 {
				r.Values = append(r.Values, it.parts[k].text(marks))
			}
			rows[t] = append(rows[t], r)
		}
	}
	cr.snap = pgfixture.NewSnapshot(rows)
	cr.types = sr.Snapshot
	for i, e := range sr.Effects {
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

func unquote(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

// freshGraph links the fresh values of a run to the rows and effects they
// appear in.
type freshGraph struct {
	index map[string]int // raw value -> id
	kinds []string
	occ   [][]int // value id -> item ids
	items []freshItem
}

type freshItem struct {
	head  string // the table or effect kind
	parts []freshPart
	row   bool // a row of the database
}

// freshPart is literal text (v < 0) or fresh value v.
type freshPart struct {
	lit string
	v   int
}

func (p freshPart) text(marks []string) string {
	if p.v < 0 {
		return p.lit
	}
	return marks[p.v]
}

// value returns the id of a fresh value, adding it.
func (g *freshGraph) value(raw, kind string) int {
	if i, ok := g.index[raw]; ok {
		return i
	}
	g.index[raw] = len(g.kinds)
	g.kinds = append(g.kinds, kind)
	g.occ = append(g.occ, nil)
	return len(g.kinds) - 1
}

func (g *freshGraph) add(it freshItem) int {
	id := len(g.items)
	g.items = append(g.items, it)
	for _, p := range it.parts {
		if p.v >= 0 && (len(g.occ[p.v]) == 0 || g.occ[p.v][len(g.occ[p.v])-1] != id) {
			g.occ[p.v] = append(g.occ[p.v], id)
		}
	}
	return id
}

// markers labels every fresh value by where it stands, refined through its
// neighbours; exact labels each by the value itself. A value in the
// database is labelled by the rows it stands in alone (effects compare
// under their policies: an email the policy lets go missing must not change
// the label of the time it carried); a value only effects carry, by them.
func (g *freshGraph) markers(exact bool) []string {
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
	for round := 0; round < refineRounds && !exact; round++ {
		next := make([]string, len(labels))
		for v := range labels {
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
		l := labels[v]
		if exact {
			l = hash(g.kinds[v], raws[v])
		}
		marks[v] = markOpen + g.kinds[v] + " " + l + markClose
	}
	return marks
}

func hash(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x02")))
	return hex.EncodeToString(h[:8])
}

// text replaces the run's fresh values in free text (a label, an error) by
// their markers, where they stand alone.
func (cr *canonRun) text(s string) string {
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

func (cr *canonRun) texts(list []string) []string {
	for i := range list {
		list[i] = cr.text(list[i])
	}
	return list
}

// rejected returns the provider's rejections with fresh values marked.
func (cr *canonRun) rejected(rs []effects.Rejection) []effects.Rejection {
	out := make([]effects.Rejection, len(rs))
	for i, r := range rs {
		r.First, r.Got = cr.text(r.First), cr.text(r.Got)
		out[i] = r
	}
	return out
}

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
}

func (p *placeholders) rows(rows []pgfixture.Row) []pgfixture.Row {
	out := make([]pgfixture.Row, len(rows))
	for i, r := range rows {
		r.Values = p.texts(slices.Clone(r.Values))
		out[i] = r
	}
	return out
}

// timeHints explains a table that differs only in columns of a time type.
func (sh *shapes) timeHints(ref *canonRun, diff []pgfixture.TableDiff) []string {
	var hints []string
	for _, d := range diff {
		if len(d.Missing) == 0 || len(d.Missing) != len(d.Extra) {
			continue
		}
		cols := d.Missing[0].Columns
		var timeCols []int
		for i, c := range cols {
			if ref.types != nil && timeType(ref.types.ColumnType(d.Table, c)) {
				timeCols = append(timeCols, i)
			}
		}
		if len(timeCols) == 0 || !slices.Equal(maskedRows(d.Missing, timeCols), maskedRows(d.Extra, timeCols)) {
			continue
		}
		for _, i := range timeCols {
			if slices.Equal(columnValues(d.Missing, i), columnValues(d.Extra, i)) {
				continue
			}
			col := cols[i]
			what := fmt.Sprintf("%s differs only in %s (%s)", d.Table, col, ref.types.ColumnType(d.Table, col))
			fresh := sh != nil && sh.cols[d.Table][col]
			switch {
			case fresh && sh.exact:
				hints = append(hints, what+", a time that differs between two clean runs too (now(), time.Now()): take it from a.Now(), the check's clock, which stands still across redeliveries, or drop twice.ExactValues() to compare it by shape (NULL or not, equal where it should be)")
			case fresh:
				hints = append(hints, what+", compared by shape because it differs between two clean runs: its shape differs (NULL where a time was, or equal to another value where it was not); a time taken from a.Now(), the check's clock, compares exactly")
			default:
				hints = append(hints, what+": if it comes from the wall clock (now(), time.Now()), take it from a.Now(), the check's clock, which stands still across redeliveries; twice compares by shape only the values that differ between two clean runs, and this one did not")
			}
		}
	}
	return hints
}

// maskedRows prints rows with the given columns left out, sorted.
func maskedRows(rows []pgfixture.Row, mask []int) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		vals := slices.Clone(r.Values)
		for _, j := range mask {
			vals[j] = "…"
		}
		out[i] = pgfixture.Row{Columns: r.Columns, Values: vals}.String()
	}
	slices.Sort(out)
	return out
}

// nondeterministicLine is what a verbose test logs about the values found.
func nondeterministicLine(rep *Report) string {
	return fmt.Sprintf("twice: %s: compared by shape (they differ between two clean runs): %s", rep.Job, strings.Join(rep.Nondeterministic, ", "))
}
