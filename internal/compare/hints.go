package compare

import (
	"fmt"
	"slices"

	"github.com/twicekit/twicekit/pgfixture"
)

// TimeHints explains a table that differs only in columns of a time type.
func (sh *Varying) TimeHints(ref *Canon, diff []pgfixture.TableDiff) []string {
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
		if len(timeCols) == 0 || !slices.Equal(MaskedRows(d.Missing, timeCols), MaskedRows(d.Extra, timeCols)) {
			continue
		}
		for _, i := range timeCols {
			if slices.Equal(ColumnValues(d.Missing, i), ColumnValues(d.Extra, i)) {
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

// MaskedRows prints rows with the given columns left out, sorted.
func MaskedRows(rows []pgfixture.Row, mask []int) []string {
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
