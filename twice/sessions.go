package twice

import (
	"context"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/checkrun"
	"github.com/twicekit/twicekit/internal/sessions"
)

// Session is a session on the check's database that the check did not
// open, as PostgreSQL's pg_stat_activity shows it: the job connected on
// its own (a pool built from a connection string), so the check sees none
// of its statements.
type Session struct {
	// PID is the session's backend process. Reports do not print it: it
	// changes every run.
	PID int
	// ApplicationName is the session's application_name ("" when the
	// client set none).
	ApplicationName string
	// ClientAddr is the client's address ("" over a Unix socket).
	ClientAddr string
}

// String names the session as a report prints it (without its PID).
func (s Session) String() string { return sessions.Session(s).String() }

// mergeSessions adds the sessions of more that a are missing (by PID).
var mergeSessions = sessions.Merge[Session]

// unseenWrites names the tables a reference run changed although the check
// saw none of its statements (seed.State.Unseen).
func (c *checker) unseenWrites(ctx context.Context, ref *ScenarioRun) ([]string, error) {
	points := make([][]faults.Step, len(ref.Attempts))
	for i, a := range ref.Attempts {
		points[i] = a.Points
	}
	return c.Seeded.Unseen(points, ref.Snapshot), nil
}

// namingTries bounds the clean runs nameUnseenSession plays.
const namingTries = 10

// nameUnseenSession plays the clean run again until the watch sees the
// session of a job whose clean run changed the database with no statement
// seen (checkrun.NameUnseen).
func (c *checker) nameUnseenSession(ctx context.Context, ref *ScenarioRun) {
	if ss := checkrun.NameUnseen(namingTries, func() ([]Session, error) {
		again, err := c.scenario(ctx, Scenario{Kind: Once}, playArgs{})
		if err != nil {
			return nil, err
		}
		return again.Sessions, nil
	}); ss != nil {
		ref.Sessions = ss
	}
}

// foreignSessionProblem says that the job used a connection of its own:
// the sessions the check saw, and the tables a reference run changed with
// no statement seen (sessions.ForeignText).
func foreignSessionProblem(ss []Session, unseen []string) Problem {
	return Problem{Kind: ProblemForeignSession, Text: sessions.ForeignText(sessions.From(ss), unseen)}
}
