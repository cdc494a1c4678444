package twice

import (
	"fmt"
	"strings"
	"time"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/internal/sched"
)

// interleaving is what the scheduler did in one concurrent scenario.
type interleaving struct {
	trace     *sched.Trace
	isolation IsolationLevel
	stuck     *sched.StuckError
	held      map[int]heldLock // the stuck attempts that waited on a lock of one that returned (lockholder.go)
}

// stuckNote is the timeline's word for stuck attempt i.
func (it *interleaving) stuckNote(i int) string {
	if h, ok := it.held[i]; ok {
		return fmt.Sprintf("STUCK (on %s, held by %s's session after it returned)", h.What, letterList(it.stuck.Positions[i].On))
	}
	return "STUCK (outside PostgreSQL)"
}

// outcome is how an attempt ended, in the words of the sequential timeline.
func outcome(a AttemptRecord) string {
	switch a.End() {
	case EndPanic:
		return "panicked"
	case EndGoexit:
		return "called t.FailNow (runtime.Goexit)"
	case EndHung:
		return "hung"
	case EndCrashed, EndCrashedBeforeAck:
		if a.CrashAt.Index > 0 {
			return fmt.Sprintf("CRASH before %d %s", a.CrashAt.Index, a.CrashAt.Label)
		}
		return fmt.Sprintf("CRASH (%s)", a.Reason)
	case EndError:
		return "returned error: " + oneLine(a.Err.Error())
	}
	return "done" // returned, or not delivered
}

// stuckProblem says which attempts were stuck and where every attempt was.
func stuckProblem(e *sched.StuckError, recs []AttemptRecord, after time.Duration) Problem {
	name := func(i int) string {
		if i < len(recs) {
			return fmt.Sprintf("%s (%s)", attemptName(recs[i]), concurrent.Letter(i))
		}
		return concurrent.Letter(i)
	}
	var who []string
	for _, i := range e.Stuck {
		who = append(who, name(i))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is stuck outside PostgreSQL: for %s (AttemptTimeout) it reached no point, did not return and waited on no lock of the other attempt (a mutex, a channel or a sleep shared between attempts?); where the attempts were:", strings.Join(who, " and "), after)
	for _, p := range e.Positions {
		fmt.Fprintf(&b, "\n    %s: %s", name(p.Attempt), position(p))
	}
	b.WriteString("\n  the check crashed both attempts (connections cut, contexts cancelled) and did not redeliver")
	return Problem{Kind: ProblemStuck, Text: b.String()}
}

// heldLocks names, for each stuck attempt blocked in PostgreSQL only on
// attempts that had returned, the lock it waits for; asked before the check
// crashes it (the crash ends the wait).
func heldLocks(e *sched.StuckError, ras []*runningAttempt) map[int]heldLock {
	held := map[int]heldLock{}
	for _, i := range e.Stuck {
		if i >= len(e.Positions) || i >= len(ras) || ras[i] == nil {
			continue
		}
		p := e.Positions[i]
		if p.State != sched.StateBlocked || len(p.On) == 0 {
			continue
		}
		returned := true
		for _, j := range p.On {
			returned = returned && j < len(e.Positions) && e.Positions[j].State == sched.StateReturned
		}
		if !returned {
			continue
		}
		if h, ok := ras[i].heldLock(); ok {
			held[i] = h
		}
	}
	return held
}

// heldLockProblem says that the stuck attempts waited in PostgreSQL for a
// lock that the session of an attempt that had returned still held, names
// the lock, and what releases it.
func heldLockProblem(e *sched.StuckError, held map[int]heldLock, recs []AttemptRecord, after time.Duration) Problem {
	name := func(i int) string {
		if i < len(recs) {
			return fmt.Sprintf("%s (%s)", attemptName(recs[i]), concurrent.Letter(i))
		}
		return concurrent.Letter(i)
	}
	var b strings.Builder
	holding := map[int]heldLock{}
	for n, i := range e.Stuck {
		p, h := e.Positions[i], held[i]
		var holders []string
		for _, j := range p.On {
			holders = append(holders, name(j))
			holding[j] = h
		}
		if n > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s waited in PostgreSQL for %s (AttemptTimeout) at point %d (%s) for %s, which the session of %s still held after %s returned",
			name(i), after, p.Step.Index, p.Step.Label, h.What, strings.Join(holders, " and "), letterList(p.On))
		switch {
		case h.Session:
			b.WriteString(": a session advisory lock is released by pg_advisory_unlock or the end of its session, not by the end of its transaction or of the attempt; " +
				"unlock it on every path, or take pg_advisory_xact_lock, which the end of its transaction releases")
		case h.Open:
			b.WriteString(": a lock is released only when its transaction ends; end every transaction on every path (defer tx.Rollback(ctx))")
		}
	}
	b.WriteString("; where the attempts were:")
	for _, p := range e.Positions {
		where := position(p)
		if h, ok := held[p.Attempt]; ok {
			where = fmt.Sprintf("blocked in PostgreSQL on %s of %s at point %d (%s)", h.What, letterList(p.On), p.Step.Index, p.Step.Label)
		} else if h, ok := holding[p.Attempt]; ok {
			where = "returned, its session still holding " + h.What
		}
		fmt.Fprintf(&b, "\n    %s: %s", name(p.Attempt), where)
	}
	fmt.Fprintf(&b, "\n  the check crashed %s (connections cut, context cancelled) and did not redeliver", letterList(e.Stuck))
	return Problem{Kind: ProblemStuck, Text: b.String()}
}

func position(p sched.Position) string {
	where := "before its first point"
	if p.Step.Index > 0 {
		where = fmt.Sprintf("after point %d (%s)", p.Step.Index, p.Step.Label)
	}
	switch p.State {
	case sched.StateWaiting:
		return fmt.Sprintf("waiting for the scheduler before point %d (%s)", p.Step.Index, p.Step.Label)
	case sched.StateBlocked:
		return fmt.Sprintf("blocked in PostgreSQL on a lock of %s at point %d (%s)", letterList(p.On), p.Step.Index, p.Step.Label)
	case sched.StateReturned:
		return "returned"
	case sched.StateNotStarted:
		return "not started yet"
	}
	if p.ForeignLock {
		return "waiting in PostgreSQL for a session that is neither attempt's, " + where
	}
	return "running " + where
}

func letterList(is []int) string { return report.Letters(is) }

// Timeline returns the timeline of the scenario with this token among those
// that ran, whether or not it broke a promise (a passing interleaving can be
// worth reading too); false when no such scenario ran.
func (r *Report) Timeline(token string) (string, bool) {
	for _, sr := range r.Scenarios {
		if sr.Scenario.Token() == token {
			return timeline(sr), true
		}
	}
	return "", false
}
