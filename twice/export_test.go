package twice

// LanesOf is how many databases played the report's sequential scenarios.
func LanesOf(r *Report) int { return r.lanes }
