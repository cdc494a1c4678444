package twice

import "github.com/twicekit/twicekit/internal/queue"

// pointsBeforeAck is how many of steps came before the ack
// (internal/queue).
var pointsBeforeAck = queue.PointsBeforeAck

func afterRunProblem(rec AttemptRecord) Problem {
	return Problem{Kind: ProblemAfterRun, Attempt: attemptName(rec), Text: queue.AfterRunProblem(rec.AfterRun, attemptName(rec))}
}

// afterRunFinding rewrites rep, when an attempt of any of its scenarios was
// caught calling after Run, to the one finding that says so
// (internal/queue).
func afterRunFinding(rep *Report, q queueConfig) {
	if rep.Reference == nil || len(rep.Reference.Attempts) == 0 || rep.Err != nil {
		return
	}
	var all []queue.Attempt
	for _, sr := range append([]*ScenarioRun{rep.Reference}, rep.Scenarios...) {
		all = append(all, queued(sr.Attempts)...)
	}
	text, caught := queue.AfterRunFinding(all)
	if !caught {
		return
	}
	ref := rep.Reference
	ref.Verdict = Broken
	f := &Finding{Scenario: ref.Scenario, Token: ref.Scenario.Token(),
		Problems: []Problem{{Kind: ProblemAfterRun, Attempt: attemptName(ref.Attempts[0]), Text: text}}}
	view := &ScenarioRun{Scenario: ref.Scenario}
	f.Headline = headline(f, view, q.describe)
	f.run = view
	rep.Findings, rep.Scenarios = []Finding{*f}, nil
	rep.stoppedEarly, rep.leftOut, rep.wallLeft, rep.covered, rep.coveredN = "", "", "", "", 0
}
