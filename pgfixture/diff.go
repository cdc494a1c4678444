package pgfixture

import (
	"sort"
	"strings"
)

// TableDiff is how one table differs between two snapshots. Missing rows
// are in want but not in got, Extra rows in got but not in want; each list is
// sorted by the rows' printed form.
type TableDiff struct {
	Table          string
	Missing, Extra []Row
}

// Diff compares two snapshots as multisets of rows per table and returns
// the tables that differ, sorted by name; nil when they are equal. A table
// in only one snapshot counts as empty in the other.
func Diff(want, got *Snapshot) []TableDiff {
	names := map[string]bool{}
	for t := range want.tablesOrNil() {
		names[t] = true
	}
	for t := range got.tablesOrNil() {
		names[t] = true
	}
	sorted := make([]string, 0, len(names))
	for t := range names {
		sorted = append(sorted, t)
	}
	sort.Strings(sorted)
	var out []TableDiff
	for _, t := range sorted {
		missing, extra := diffRows(want.tablesOrNil()[t], got.tablesOrNil()[t])
		if len(missing) > 0 || len(extra) > 0 {
			out = append(out, TableDiff{Table: t, Missing: missing, Extra: extra})
		}
	}
	return out
}

func (s *Snapshot) tablesOrNil() map[string][]Row {
	if s == nil {
		return nil
	}
	return s.tables
}

func diffRows(want, got []Row) (missing, extra []Row) {
	count := map[string]int{}
	for _, r := range got {
		count[r.String()]++
	}
	for _, r := range want {
		k := r.String()
		if count[k] > 0 {
			count[k]--
		} else {
			missing = append(missing, r)
		}
	}
	for _, r := range got {
		k := r.String()
		if count[k] > 0 {
			count[k]--
			extra = append(extra, r)
		}
	}
	sortRows(missing)
	sortRows(extra)
	return missing, extra
}

// FormatDiff prints a diff table by table, in sorted order:
//
//	customers:
//	  - (id=1, name='Ann')
//	  + (id=1, name='Anne')
//
// "-" marks a row wanted but missing, "+" a row got but not wanted.
func FormatDiff(d []TableDiff) string {
	var b strings.Builder
	for _, td := range d {
		b.WriteString(td.Table)
		b.WriteString(":\n")
		for _, r := range td.Missing {
			b.WriteString("  - ")
			b.WriteString(r.String())
			b.WriteByte('\n')
		}
		for _, r := range td.Extra {
			b.WriteString("  + ")
			b.WriteString(r.String())
			b.WriteByte('\n')
		}
	}
	return b.String()
}
