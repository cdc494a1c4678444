package pgfixture

// ExcludeRows leaves out of the snapshot the rows of table ("table", or
// "schema.table" outside public) for which condition, an SQL boolean
// expression over its columns, is true; a NULL condition keeps the row. A
// queue adapter uses it to leave out the queue's row of the job under check
// (its bookkeeping), while the jobs the job enqueues are compared.
func ExcludeRows(table, condition string) SnapshotOption {
	return optFunc(func(o *snapOpts) {
		if o.exclude == nil {
			o.exclude = map[string]string{}
		}
		o.exclude[table] = condition
	})
}
