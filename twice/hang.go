package twice

import "github.com/twicekit/twicekit/internal/report"

// hung reports whether an attempt of the scenario hung.
func (sr *ScenarioRun) hung() bool {
	for _, a := range sr.Attempts {
		if a.Hung {
			return true
		}
	}
	return false
}

// stoppedAfterHang says which scenarios a check left out after the first
// hung attempt: every later one would likely wait out the attempt timeout
// the same way, so a hanging job costs one timeout, not one per scenario.
func stoppedAfterHang(sr *ScenarioRun, left int, concurrentLeft bool) string {
	return report.StoppedAfterHangText(sr.Scenario.Token(), left, concurrentLeft)
}
