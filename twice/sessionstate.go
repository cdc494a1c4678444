package twice

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessionstate"
)

// A scenario's first delivery starts on fresh sessions (freshsessions.go);
// its redeliveries reuse the worker's sessions, as a pooled production
// connection would. Before a redelivery starts on a worker an earlier
// delivery of the scenario ran on, the check reads, on each idle session
// of that worker, what a session keeps across transactions: temporary
// tables, session advisory locks, parameters SET for the session, statements
// made with SQL PREPARE and channels it LISTENs on. What an earlier delivery
// left there (not what the application's AfterConnect set up) goes on the
// redelivery's record (AttemptRecord.SessionState), and a finding whose
// redelivery ran on such a session says so among its hints. The text names
// the state and the attempts, never a PID or a temporary schema's number.

// sessionStateWait bounds the look at a worker's idle sessions.
const sessionStateWait = 5 * time.Second

// freshWorker ends the sessions of w when an attempt of the scenario ran
// there, and waits until PostgreSQL has ended them
// (FreshSessionsPerDelivery).
func (c *checker) freshWorker(ctx context.Context, w *inject.Worker) error {
	if !c.ranOn(w) {
		return nil // fresh already (freshsessions.go)
	}
	w.Fresh()
	name := w.Pool.Config().ConnConfig.RuntimeParams["application_name"]
	return c.waitSessionsEnded(ctx, []string{name}, "a worker of the check") // freshsessions.go
}

// ranOn reports whether an attempt of the current scenario ran on w.
func (c *checker) ranOn(w *inject.Worker) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.ran {
		if r.Worker == w {
			return true
		}
	}
	return false
}

// sessionState says what the earlier deliveries of the scenario left on
// the idle sessions of w, as a redelivery about to start there finds them
// ("attempt 1 of job-1 left temporary table scratch, advisory lock (42)"),
// or "" when they left nothing (or the check could not look).
func (c *checker) sessionState(ctx context.Context, w *inject.Worker) string {
	if !c.ranOn(w) {
		return "" // the first delivery on w: its sessions are fresh
	}
	ctx, cancel := context.WithTimeout(ctx, sessionStateWait)
	defer cancel()
	var lines []string
	_ = w.EachIdleSession(ctx, func(ctx context.Context, conn *pgx.Conn) error {
		used, sets := c.usedSession(conn.PgConn().PID())
		if !used {
			return nil // no delivery of the scenario ran there: nothing to read
		}
		pid, state, err := sessionstate.Read(ctx, conn, sets)
		if err != nil {
			return err
		}
		if line := c.leftBy(pid, c.setUp.Left(pid, state)); line != "" {
			lines = append(lines, line)
		}
		return nil
	})
	slices.Sort(lines)
	lines = slices.Compact(lines)
	return strings.Join(lines, "; ")
}

// usedSession reports whether an attempt of the current scenario ran a
// statement on backend pid, and whether one of them may have SET a
// parameter for the session.
func (c *checker) usedSession(pid uint32) (used, sets bool) {
	c.mu.Lock()
	ran := slices.Clone(c.ran)
	c.mu.Unlock()
	for _, r := range ran {
		for _, s := range r.Run.Steps() {
			if s.Kind == faults.SQL && s.Backend == pid {
				used = true
				sets = sets || sessionstate.SetsSession(s.Label)
			}
		}
	}
	return used, sets
}

// leftState is what the check last saw on one session of the current
// scenario: when (how many attempts had started) and which attempts left
// each item of its state.
type leftState struct {
	looked int
	by     map[string]string
}

// leftBy says which attempts left state on session pid ("attempt 1 of
// job-1 left temporary table t"), "" when none did: an item first seen now
// was left by the attempts that ran on the session since the last look at
// it; an item seen before keeps the attempts it was seen with then.
func (c *checker) leftBy(pid uint32, state []string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left == nil {
		c.left = map[uint32]*leftState{}
	}
	l := c.left[pid]
	if l == nil {
		l = &leftState{by: map[string]string{}}
		c.left[pid] = l
	}
	since := ranOnBackend(c.ran[l.looked:], pid)
	l.looked = len(c.ran)
	var groups []string
	items := map[string][]string{}
	for _, x := range state {
		by, ok := l.by[x]
		if !ok {
			by = joinAnd(since)
			l.by[x] = by
		}
		if by == "" {
			continue // no delivery of the scenario ran there: the session's own
		}
		if _, ok := items[by]; !ok {
			groups = append(groups, by)
		}
		items[by] = append(items[by], x)
	}
	for x := range l.by {
		if !slices.Contains(state, x) {
			delete(l.by, x) // gone: if it comes back, it is left anew
		}
	}
	var parts []string
	for _, by := range groups {
		parts = append(parts, by+" left "+strings.Join(items[by], ", "))
	}
	return strings.Join(parts, "; ")
}

// ranOnBackend names, in the order they ran, the attempts of ran whose
// points ran on backend pid.
func ranOnBackend(ran []ranAttempt, pid uint32) []string {
	var names []string
	for _, r := range ran {
		if slices.ContainsFunc(r.Run.Steps(), func(s faults.Step) bool { return s.Kind == faults.SQL && s.Backend == pid }) &&
			!slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
	}
	return names
}

// joinAnd joins names with commas and a final "and".
func joinAnd(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// sessionStateHints say which attempts of a finding's scenario started on a
// session an earlier delivery had left state on, and what that means: one
// hint for the attempts that found the same state.
func sessionStateHints(sr *ScenarioRun) []string {
	var states []string
	by := map[string][]string{}
	for _, a := range sr.Attempts {
		if a.SessionState == "" {
			continue
		}
		if _, ok := by[a.SessionState]; !ok {
			states = append(states, a.SessionState)
		}
		by[a.SessionState] = append(by[a.SessionState], attemptName(a))
	}
	var hints []string
	for _, s := range states {
		hints = append(hints, fmt.Sprintf("%s started on a session where %s", joinAnd(by[s]), s))
	}
	if len(hints) > 0 {
		hints[len(hints)-1] += ": a production pool may hand a redelivery the session an earlier delivery used, or a fresh one, " +
			"so a job must not depend on what a delivery leaves on its session (a temporary table ON COMMIT DROP, pg_advisory_xact_lock, SET LOCAL, " +
			"DEALLOCATE what it PREPAREs, UNLISTEN what it LISTENs); twice.FreshSessionsPerDelivery() starts every delivery on fresh sessions, to tell whether that state is the cause"
	}
	return hints
}
