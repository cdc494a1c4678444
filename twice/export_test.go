package twice

// LanesOf is how many databases played the report's sequential scenarios.
func LanesOf(r *Report) int { return r.lanes }

// ParallelNoteOf is why the check played fewer scenarios at once than asked.
func ParallelNoteOf(r *Report) string { return r.parallelNote }
