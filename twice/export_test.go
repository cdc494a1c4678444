package twice

// LanesOf is how many databases played the report's sequential scenarios.
func LanesOf(r *Report) int { return r.lanes }

// ParallelNoteOf is why the check played fewer scenarios at once than asked.
func ParallelNoteOf(r *Report) string { return r.parallelNote }

// PlayImplicitTransactions switches playing autocommit statements as their
// implicit transactions on or off in the concurrent scenarios, and returns
// the function that puts it back. A test that sets it must not run in
// parallel.
func PlayImplicitTransactions(on bool) (restore func()) {
	was := implicitTxOff.Swap(!on)
	return func() { implicitTxOff.Store(was) }
}
