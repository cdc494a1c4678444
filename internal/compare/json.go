package compare

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twicekit/twicekit/pgfixture"
)

// JSON compared as JSON: a json or jsonb value is compared leaf by leaf.
// Only the leaves whose values differ between two clean runs (found by
// path, "args.at", arrays by position, "items.0.at") compare by shape; the
// rest of the document compares by value.

// jsonLeaf is a scalar of a JSON document as printed.
type jsonLeaf struct {
	path       string // "at", "items.0.at"; "" for a document that is a scalar
	raw        string // as printed: "\"Finished\"", "12", "true", "null"
	value      string // a string's content, else raw
	str        bool   // a string
	start, end int    // where raw stands in the document's text
}

// mayHoldJSON reports whether a column of a PostgreSQL type may hold JSON:
// json, jsonb, and bytea printed as its JSON text (gue's args, as twicegue
// prints them). A value that is not JSON is compared as any other.
func mayHoldJSON(name string) bool { return name == "json" || name == "jsonb" || name == "bytea" }

// jsonFrame is a container being read: an object (with the key of the
// value to come) or an array (with the index of the element to come).
type jsonFrame struct {
	object bool
	prefix string
	key    string
	onKey  bool
	index  int
}

// jsonLeaves lists the scalars of a JSON document in text order; ok is false
// when text is not JSON.
func jsonLeaves(text string) (leaves []jsonLeaf, ok bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var stack []*jsonFrame
	join := func(prefix, elem string) string {
		if prefix == "" {
			return elem
		}
		return prefix + "." + elem
	}
	for {
		off := int(dec.InputOffset())
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return leaves, len(stack) == 0
		}
		if err != nil {
			return nil, false
		}
		var top *jsonFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, isDelim := tok.(json.Delim); isDelim && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if top != nil && top.object && top.onKey {
			top.key, _ = tok.(string)
			top.onKey = false
			continue
		}
		path := ""
		switch {
		case top != nil && top.object:
			path = join(top.prefix, top.key)
			top.onKey = true
		case top != nil:
			path = join(top.prefix, strconv.Itoa(top.index))
			top.index++
		}
		if d, isDelim := tok.(json.Delim); isDelim {
			stack = append(stack, &jsonFrame{object: d == '{', prefix: path, onKey: d == '{'})
			continue
		}
		for off < len(text) && strings.IndexByte(" \t\r\n,:", text[off]) >= 0 {
			off++
		}
		end := int(dec.InputOffset())
		l := jsonLeaf{path: path, raw: text[off:end], start: off, end: end}
		l.value = l.raw
		if s, isString := tok.(string); isString {
			l.value, l.str = s, true
		}
		leaves = append(leaves, l)
	}
}

// jsonPathName names a leaf of a column for reports: "gue_jobs.args.at".
func jsonPathName(table, col, path string) string {
	if path == "" {
		return table + "." + col
	}
	return table + "." + col + "." + path
}

// jsonColumnLeaves collects, per path, the sorted printed leaves of column i
// of rows; ok is false when a value is not JSON.
func jsonColumnLeaves(rows []pgfixture.Row, i int) (map[string][]string, bool) {
	out := map[string][]string{}
	for _, r := range rows {
		if i >= len(r.Values) || r.Values[i] == "NULL" {
			continue
		}
		leaves, ok := jsonLeaves(r.Values[i])
		if !ok {
			return nil, false
		}
		for _, l := range leaves {
			out[l.path] = append(out[l.path], l.raw)
		}
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out, true
}

// JSONHints name the paths at which a row's JSON differs from the reference
// run's, where the rows of a table differ in their JSON columns alone.
func JSONHints(ref *Canon, diff []pgfixture.TableDiff) []string {
	var hints []string
	for _, d := range diff {
		if len(d.Missing) == 0 || len(d.Missing) != len(d.Extra) || ref.types == nil {
			continue
		}
		cols := d.Missing[0].Columns
		var jsonCols []int
		for i, c := range cols {
			if mayHoldJSON(ref.types.ColumnType(d.Table, c)) {
				jsonCols = append(jsonCols, i)
			}
		}
		if len(jsonCols) == 0 || !slices.Equal(MaskedRows(d.Missing, jsonCols), MaskedRows(d.Extra, jsonCols)) {
			continue
		}
		for k := range d.Missing {
			for _, i := range jsonCols {
				want, okW := jsonLeaves(d.Missing[k].Values[i])
				got, okG := jsonLeaves(d.Extra[k].Values[i])
				if !okW || !okG {
					continue
				}
				hints = append(hints, jsonLeafHints(jsonPathName(d.Table, cols[i], ""), want, got)...)
			}
		}
	}
	return hints
}

// jsonLeafHints compares two documents' leaves by path.
func jsonLeafHints(name string, want, got []jsonLeaf) []string {
	byPath := func(ls []jsonLeaf) map[string]string {
		m := map[string]string{}
		for _, l := range ls {
			m[l.path] = l.raw
		}
		return m
	}
	w, g := byPath(want), byPath(got)
	var paths []string
	for _, l := range want {
		if g[l.path] != l.raw {
			paths = append(paths, l.path)
		}
	}
	for _, l := range got {
		if _, in := w[l.path]; !in {
			paths = append(paths, l.path)
		}
	}
	var hints []string
	for _, p := range paths {
		at := name
		if p != "" {
			at += "." + p
		}
		wv, inW := w[p]
		gv, inG := g[p]
		switch {
		case !inW:
			hints = append(hints, fmt.Sprintf("%s is %s here and absent in the reference run", at, gv))
		case !inG:
			hints = append(hints, fmt.Sprintf("%s is %s in the reference run and absent here", at, wv))
		default:
			hints = append(hints, fmt.Sprintf("%s differs: %s in the reference run, %s here", at, wv, gv))
		}
	}
	return hints
}
