package scenarios

import (
	"time"

	"github.com/twicekit/twicekit/faults"
)

// Planning is what the planners of the kinds see.
type Planning struct {
	Steps       []faults.Step // the reference run's points
	CrashPoints []int         // the crash points the budget keeps
	LoseReplies bool          // plan the statement reply-lost scenarios
	BeforeAck   int           // how many of Steps came before the ack

	Redrives      []time.Duration // the late redrives asked for (LateRedrive)
	DupEnqueueOff string          // why the duplicate enqueue is not played ("": it is)
}

// Plan lists the scenarios for a reference run with these points: each
// kind's, in the table's order, the per-job kinds first and then, for every
// effect point, the per-effect kinds.
func Plan(p Planning) []Scenario {
	n := len(p.Steps)
	var all []Scenario
	add := func(ss []Scenario) {
		for _, s := range ss {
			s.Of = n
			all = append(all, s)
		}
	}
	for _, d := range kinds {
		if d.plan != nil && !d.perEffect {
			add(d.plan(p, faults.Step{}))
		}
	}
	for _, st := range p.Steps {
		if st.Kind != faults.Effect {
			continue
		}
		for _, d := range kinds {
			if d.plan != nil && d.perEffect {
				add(d.plan(p, st))
			}
		}
	}
	return all
}

// Only is what the check plays of all, the scenarios Plan listed, when
// -twice.run or Only names a token: none when it is a concurrent token
// (those play apart), else the scenario it names. ok is false when it names
// none, and tokens then lists all's tokens, for UnknownOnly.
func Only(all []Scenario, only string) (kept []Scenario, tokens []string, ok bool) {
	if IsConcurrentToken(only) {
		return nil, nil, true
	}
	for _, s := range all {
		if s.Token() == only {
			return []Scenario{s}, nil, true
		}
		tokens = append(tokens, s.Token())
	}
	return nil, tokens, false
}
