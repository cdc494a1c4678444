package sessionstate

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sessions"
)

// Wait bounds the look at a worker's idle sessions.
const Wait = 5 * time.Second

// OnWorker says what the earlier deliveries of a scenario left on the idle
// sessions of w, as a redelivery about to start there finds them
// ("attempt 1 of job-1 left temporary table scratch, advisory lock (42)"),
// or "" when they left nothing (or the check could not look).
// used says whether a delivery of the scenario ran a statement on a
// session, and whether one of them may have SET a parameter for it.
// leftBy says which attempts left a session's state (Left.By).
// What s saw the application's AfterConnect set up is left out.
func OnWorker(ctx context.Context, w *inject.Worker, s *SetUp, used func(pid uint32) (used, sets bool), leftBy func(pid uint32, state []string) string) string {
	ctx, cancel := context.WithTimeout(ctx, Wait)
	defer cancel()
	var lines []string
	_ = w.EachIdleSession(ctx, func(ctx context.Context, conn *pgx.Conn) error {
		used, sets := used(conn.PgConn().PID())
		if !used {
			return nil // no delivery of the scenario ran there: nothing to read
		}
		pid, state, err := Read(ctx, conn, sets)
		if err != nil {
			return err
		}
		if line := leftBy(pid, s.Left(pid, state)); line != "" {
			lines = append(lines, line)
		}
		return nil
	})
	slices.Sort(lines)
	lines = slices.Compact(lines)
	return strings.Join(lines, "; ")
}

// Used reports whether an attempt of ran ran a statement on backend pid,
// and whether one of them may have SET a parameter for the session.
func Used(ran []sessions.Ran, pid uint32) (used, sets bool) {
	for _, r := range ran {
		for _, s := range r.Run.Steps() {
			if s.Kind == faults.SQL && s.Backend == pid {
				used = true
				sets = sets || SetsSession(s.Label)
			}
		}
	}
	return used, sets
}

// Left is what the check last saw on each session of the current
// scenario: when (how many attempts had started) and which attempts left
// each item of its state. Its zero value has seen nothing.
type Left struct {
	seen map[uint32]*leftState
}

// leftState is what the check last saw on one session.
type leftState struct {
	looked int
	by     map[string]string
}

// By says which attempts left state on session pid ("attempt 1 of job-1
// left temporary table t"), "" when none did.
// ran are the attempts started in the current scenario, in order.
// An item first seen now was left by the attempts that ran on the session
// since the last look at it.
// An item seen before keeps the attempts it was seen with then.
func (lf *Left) By(ran []sessions.Ran, pid uint32, state []string) string {
	if lf.seen == nil {
		lf.seen = map[uint32]*leftState{}
	}
	l := lf.seen[pid]
	if l == nil {
		l = &leftState{by: map[string]string{}}
		lf.seen[pid] = l
	}
	since := ranOnBackend(ran[l.looked:], pid)
	l.looked = len(ran)
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
func ranOnBackend(ran []sessions.Ran, pid uint32) []string {
	var names []string
	for _, r := range ran {
		if slices.ContainsFunc(r.Run.Steps(), func(s faults.Step) bool { return s.Kind == faults.SQL && s.Backend == pid }) &&
			!slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
	}
	return names
}

// joinAnd joins names with commas and a final "and", as twice's reports
// join them.
func joinAnd(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
