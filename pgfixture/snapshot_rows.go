package pgfixture

import "strings"

// ExcludeRows leaves out of the snapshot the rows of table ("table", or
// "schema.table" outside public) for which condition, an SQL boolean
// expression over its columns, is true. A NULL condition keeps the row.
// Rules compose: with several ExcludeRows on one table, a row is left out
// when any of their conditions is true. A queue adapter uses it to leave out
// the queue's rows of the job under check (its bookkeeping), while the jobs
// the job enqueues are compared; the user's own rules on the same table add
// to the adapter's.
func ExcludeRows(table, condition string) SnapshotOption {
	table = strings.TrimPrefix(table, "public.")
	return optFunc(func(o *snapOpts) {
		if o.exclude == nil {
			o.exclude = map[string]orList{}
		}
		o.exclude[table] = append(o.exclude[table], condition)
	})
}

// orList is the conditions of one table's ExcludeRows rules: a row
// matching any of them is left out.
type orList []string

// excludeWhere is the condition of the rows of table (as displayed) that
// the options leave out: true when any rule's condition is true, "" when
// no rule names it.
func (o *snapOpts) excludeWhere(table string) string {
	conds := o.exclude[table]
	switch len(conds) {
	case 0:
		return ""
	case 1:
		return conds[0]
	}
	parts := make([]string, len(conds))
	for i, c := range conds {
		parts[i] = "(" + c + ") IS TRUE"
	}
	return strings.Join(parts, " OR ")
}
