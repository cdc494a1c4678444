package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/internal/sched"
	"github.com/twicekit/twicekit/internal/sessions"
)

// stuckName names attempt i of a concurrent scenario: its name (names[i],
// "attempt N of JOB") and its letter, or its letter alone.
func stuckName(names []string, i int) string {
	if i < len(names) {
		return fmt.Sprintf("%s (%s)", names[i], concurrent.Letter(i))
	}
	return concurrent.Letter(i)
}

// StuckText says which attempts were stuck and where every attempt was;
// names are the attempts' names, in letter order, and after is the
// AttemptTimeout they were stuck for.
func StuckText(e *sched.StuckError, names []string, after time.Duration) string {
	var who []string
	for _, i := range e.Stuck {
		who = append(who, stuckName(names, i))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is stuck outside PostgreSQL: for %s (AttemptTimeout) it reached no point, did not return and waited on no lock of the other attempt (a mutex, a channel or a sleep shared between attempts?); where the attempts were:", strings.Join(who, " and "), after)
	for _, p := range e.Positions {
		fmt.Fprintf(&b, "\n    %s: %s", stuckName(names, p.Attempt), position(p))
	}
	b.WriteString("\n  the check crashed both attempts (connections cut, contexts cancelled) and did not redeliver")
	return b.String()
}

// HeldLockText says that the stuck attempts waited in PostgreSQL for a
// lock that the session of an attempt that had returned still held, names
// the lock (held, by stuck attempt), and what releases it.
func HeldLockText(e *sched.StuckError, held map[int]sessions.HeldLock, names []string, after time.Duration) string {
	var b strings.Builder
	holding := map[int]sessions.HeldLock{}
	for n, i := range e.Stuck {
		p, h := e.Positions[i], held[i]
		var holders []string
		for _, j := range p.On {
			holders = append(holders, stuckName(names, j))
			holding[j] = h
		}
		if n > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s waited in PostgreSQL for %s (AttemptTimeout) at point %d (%s) for %s, which the session of %s still held after %s returned",
			stuckName(names, i), after, p.Step.Index, p.Step.Label, h.What, strings.Join(holders, " and "), Letters(p.On))
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
			where = fmt.Sprintf("blocked in PostgreSQL on %s of %s at point %d (%s)", h.What, Letters(p.On), p.Step.Index, p.Step.Label)
		} else if h, ok := holding[p.Attempt]; ok {
			where = "returned, its session still holding " + h.What
		}
		fmt.Fprintf(&b, "\n    %s: %s", stuckName(names, p.Attempt), where)
	}
	fmt.Fprintf(&b, "\n  the check crashed %s (connections cut, context cancelled) and did not redeliver", Letters(e.Stuck))
	return b.String()
}

// position says where an attempt was when the scheduler found attempts
// stuck.
func position(p sched.Position) string {
	where := "before its first point"
	if p.Step.Index > 0 {
		where = fmt.Sprintf("after point %d (%s)", p.Step.Index, p.Step.Label)
	}
	switch p.State {
	case sched.StateWaiting:
		return fmt.Sprintf("waiting for the scheduler before point %d (%s)", p.Step.Index, p.Step.Label)
	case sched.StateBlocked:
		return fmt.Sprintf("blocked in PostgreSQL on a lock of %s at point %d (%s)", Letters(p.On), p.Step.Index, p.Step.Label)
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
