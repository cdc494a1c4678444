package twice

// hung reports whether an attempt of the scenario hung.
func (sr *ScenarioRun) hung() bool {
	for _, a := range sr.Attempts {
		if a.Hung {
			return true
		}
	}
	return false
}
