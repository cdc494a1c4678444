package twice

import "fmt"

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
	what := fmt.Sprintf("%d more scenarios", left)
	switch {
	case left == 1:
		what = "1 more scenario"
	case left == 0 && concurrentLeft:
		what = "the concurrent scenarios"
	}
	if left > 0 && concurrentLeft {
		what += " and the concurrent ones"
	}
	return fmt.Sprintf("not run after the hang in %s: %s (each would wait out AttemptTimeout the same way; fix the hang, then check again)",
		sr.Scenario.Token(), what)
}
