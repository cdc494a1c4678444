package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twicekit/twicekit/pgfixture"
)

// DeliveryRecordHints names a worker's own record of its deliveries: when
// every table of the diff differs from the clean run only in columns named
// as such a record is (an attempt count, a retry count, the last error),
// the finding says that those columns are all that differ, names them, and
// names the option that leaves them out. Such columns differ after a
// redelivery in production too; whether that matters is the app's call.
func DeliveryRecordHints(diff []pgfixture.TableDiff) []string {
	var cols []string
	for _, d := range diff {
		differ, ok := onlyColumnsDiffer(d)
		if !ok {
			return nil
		}
		for _, c := range differ {
			if !deliveryRecordColumn(c) {
				return nil
			}
			cols = append(cols, d.Table+"."+c)
		}
	}
	if len(cols) == 0 {
		return nil
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	return []string{fmt.Sprintf("the rows differ from one clean run only in %s: the worker's own record of its deliveries (attempts, retries, the last error), "+
		"which a redelivery changes in production too; if the app keeps that record on purpose, leave it out of the comparison with twice.IgnoreColumns(%s)",
		strings.Join(cols, ", "), strings.Join(quoted, ", "))}
}

// onlyColumnsDiffer reports the columns in which a table's rows differ, when
// its missing and extra rows pair up once those columns are left out.
func onlyColumnsDiffer(d pgfixture.TableDiff) ([]string, bool) {
	if len(d.Missing) == 0 || len(d.Missing) != len(d.Extra) || !slices.Equal(d.Missing[0].Columns, d.Extra[0].Columns) {
		return nil, false
	}
	cols := d.Missing[0].Columns
	var mask []int
	for i := range cols {
		if !slices.Equal(ColumnValues(d.Missing, i), ColumnValues(d.Extra, i)) {
			mask = append(mask, i)
		}
	}
	if len(mask) == 0 || len(mask) == len(cols) || !slices.Equal(MaskedRows(d.Missing, mask), MaskedRows(d.Extra, mask)) {
		return nil, false
	}
	out := make([]string, len(mask))
	for j, i := range mask {
		out[j] = cols[i]
	}
	return out, true
}

// deliveryRecordColumn reports whether a column's name says it records
// deliveries: attempts, attempt_count, retries, retry_count, tries,
// last_error, error_message, failures, failed_attempts and the like.
func deliveryRecordColumn(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"attempt", "retr", "tries", "try_count", "error", "fail"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
