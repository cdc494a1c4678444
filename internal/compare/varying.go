package compare

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
)

// Varying values: values that differ between two clean runs.
//
// The check runs the clean reference twice. The second run uses the same
// database, reset to the same seeded rows (internal/seed), and the check's clock
// at the same start.
// A column whose values differ between the two runs holds varying values: an
// explicit now(), gen_random_uuid(), time.Now() or a uuid made in Go. So does
// a word of an effect's key or payload that differs between them. The job
// does not decide these values, so every scenario compares them by shape.
//
// Comparing by shape replaces each varying value with a label computed from
// where it stands: the rows and effects it appears in, with the other
// varying values replaced by their own labels, refined three times. Two
// runs are equal when one consistent renaming of their varying values makes
// them equal, up to the rare structures such refinement cannot tell apart. A
// NULL stays a NULL. The same uuid written to two tables must be the same in
// both. Swapping which row gets which uuid is a difference.
//
// A json or jsonb value is compared as JSON (json.go): only its leaves that
// differ between two clean runs, found by path, compare by shape.
//
// Values the job computes from a.Now() are the same in both clean runs and
// compare exactly. Reports print varying values as ‹time N›, ‹uuid N› or
// ‹value N›, numbered by first appearance, never raw.

// The kinds of varying values, as their placeholders name them.
const (
	varyingTime  = "time"
	varyingUUID  = "uuid"
	varyingValue = "value"
	varyingKey   = "key" // a generated key (generatedkeys.go)
)

// wallMargin: a time value within this of the wall clock while the
// reference ran is taken from the wall clock even when both clean runs
// happened to write the same one (a now() truncated to the second or day).
const wallMargin = 36 * time.Hour

// Varying is what the two clean runs showed: which columns and effect words
// hold varying values.
type Varying struct {
	exact  bool
	cols   map[string]map[string]bool // table -> column -> varying values
	stable map[string]bool            // table \x00 column \x00 value: the same in both clean runs
	json   map[string]map[string]bool // table \x00 column -> paths of a JSON column's varying leaves
	words  map[string]map[int]bool    // effect kind \x00 skeleton -> positions of varying words
	same   map[string]bool            // effect words that both clean runs sent
	wall   [2]time.Time               // the wall clock around the first clean run
	clock  [2]time.Time               // the check's clock, from its start to its latest redrive
	found  []string
	ref    *Canon
	// keysOnly: no second clean run; only the generated keys vary.
	keysOnly bool
}

// Detect compares two clean runs: a, the reference, and b, played again on
// the same seeded rows with the check's clock at the same start. wall is the
// wall clock around the first, clock the check's clock from its start to its
// latest redrive. exact compares every value exactly, as twice.ExactValues asks.
func Detect(a, b Run, wall, clock [2]time.Time, exact bool) *Varying {
	sh := detectVarying(a, b, wall, clock)
	sh.exact = exact
	return sh
}

// WithReference is a copy of sh that keeps the canonical form of the
// reference run ref with the copies of generated keys kc, made once.
func (sh *Varying) WithReference(ref Run, kc *KeyCopies) *Varying {
	c := *sh
	c.ref = nil
	c.ref = c.Canon(ref, kc)
	return &c
}

// Found names the columns, JSON leaves and effect words found to vary, in
// the order they were found.
func (sh *Varying) Found() []string { return sh.found }

// detectVarying compares two clean runs.
func detectVarying(a, b Run, wall, clock [2]time.Time) *Varying {
	sh := &Varying{cols: map[string]map[string]bool{}, stable: map[string]bool{}, json: map[string]map[string]bool{}, words: map[string]map[int]bool{}, same: map[string]bool{}, wall: wall, clock: clock}
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
			if a.Snapshot.GeneratedKey(t, col) != "" {
				continue // compared up to renaming in every scenario (generatedkeys.go)
			}
			if mayHoldJSON(a.Snapshot.ColumnType(t, col)) && sh.jsonColumn(t, col, ra, rb, i) {
				continue
			}
			va, vb := ColumnValues(ra, i), ColumnValues(rb, i)
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

// ColumnValues are the values of column i of rows, sorted.
func ColumnValues(rows []pgfixture.Row, i int) []string {
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
func (sh *Varying) nearWall(v string) bool {
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

// jsonColumn records the varying leaves of a JSON column, by path, and
// their stable values (table \x00 column.path \x00 leaf); false when a
// value is not JSON (the column is then compared as any other).
func (sh *Varying) jsonColumn(t, col string, ra, rb []pgfixture.Row, i int) bool {
	la, okA := jsonColumnLeaves(ra, i)
	lb, okB := jsonColumnLeaves(rb, i)
	if !okA || !okB {
		return false
	}
	paths := map[string]bool{}
	for p := range la {
		paths[p] = true
	}
	for p := range lb {
		paths[p] = true
	}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		fresh := !slices.Equal(la[p], lb[p])
		inB := map[string]bool{}
		for _, v := range lb[p] {
			inB[v] = true
		}
		for _, v := range la[p] {
			if strings.HasPrefix(v, `"`) && timeWordRe.MatchString(unquoteJSON(v)) && sh.nearWall(unquoteJSON(v)) {
				fresh = true
				continue
			}
			if inB[v] {
				sh.stable[t+"\x00"+col+"."+p+"\x00"+v] = true
			}
		}
		if fresh {
			key := t + "\x00" + col
			if sh.json[key] == nil {
				sh.json[key] = map[string]bool{}
			}
			sh.json[key][p] = true
			sh.found = append(sh.found, jsonPathName(t, col, p))
		}
	}
	return true
}

// unquoteJSON is a printed JSON string's content (v itself when it is not one).
func unquoteJSON(v string) string {
	var s string
	if json.Unmarshal([]byte(v), &s) != nil {
		return v
	}
	return s
}
