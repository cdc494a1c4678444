package sessions

import (
	"fmt"
	"sort"
	"strings"
)

// String names the session as a report prints it (without its PID).
func (s Session) String() string {
	app := "no application_name"
	if s.ApplicationName != "" {
		app = fmt.Sprintf("application_name %q", s.ApplicationName)
	}
	from := "over a Unix socket"
	if s.ClientAddr != "" {
		from = "from " + s.ClientAddr
	}
	return "a session with " + app + ", " + from
}

// ForeignText says that the job used a connection of its own: the sessions
// the check saw, and the tables a reference run changed with no statement
// seen (unseen). Sessions print without their PIDs, each once.
func ForeignText(sessions []Session, unseen []string) string {
	var b strings.Builder
	b.WriteString("the job opened its own connection to the check's database: its statements are not seen")
	said := map[string]bool{}
	var lines []string
	for _, s := range sessions {
		if t := s.String(); !said[t] {
			said[t] = true
			lines = append(lines, t)
		}
	}
	sort.Strings(lines) // by what is printed, never by PID: the same report every run
	for _, t := range lines {
		b.WriteString("\n    " + t)
	}
	if len(unseen) > 0 {
		fmt.Fprintf(&b, "\n    the clean run changed %s although the check saw no statement of it", tableList(unseen))
	}
	b.WriteString("\n  run every statement on a.Pool or a.DB (a pool of your own built with pgxpool.NewWithConfig(ctx, a.Pool.Config()) is seen too), not on a pool opened from a connection string")
	return b.String()
}

func tableList(tables []string) string {
	if len(tables) == 1 {
		return "table " + tables[0]
	}
	return "tables " + strings.Join(tables, ", ")
}

// LockWaitText says that attempt (its name) was still waiting for a lock
// after bound at its point n (label), who held it (holder), and what ends
// such a wait.
func LockWaitText(attempt, bound string, n int, label, holder string) string {
	return fmt.Sprintf("%s was still waiting in PostgreSQL after %s: point %d (%s) waits for a lock held by %s. "+
		"A lock is released only when its holder's transaction ends: end every transaction on every path (defer tx.Rollback(ctx)), "+
		"take locks in one transaction on one connection, and give a holder that is only slow more time with twice.AttemptTimeout(d); "+
		"its connections were cut and its context cancelled",
		attempt, bound, n, label, holder)
}
