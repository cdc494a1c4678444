package twice

import (
	"context"

	"github.com/twicekit/twicekit/internal/serverfacts"
)

// attemptFacts are the attempts of rep, the reference run's first, as
// internal/serverfacts sees them.
func attemptFacts(rep *Report) []serverfacts.Attempt {
	runs := rep.Scenarios
	if rep.Reference != nil {
		runs = append([]*ScenarioRun{rep.Reference}, runs...)
	}
	var out []serverfacts.Attempt
	for _, sr := range runs {
		for _, a := range sr.Attempts {
			out = append(out, serverfacts.Attempt{Name: attemptName(a), Scenario: sr.Scenario.Token(), Err: a.Err, ClosedPool: a.closedPool})
		}
	}
	return out
}

// serverWentAway returns the check's error when the PostgreSQL server went
// away during the check (serverfacts.WentAwayDuring).
func (c *checker) serverWentAway(ctx context.Context, rep *Report) error {
	return serverfacts.WentAwayDuring(ctx, rep.Err, attemptFacts(rep), c.DB.ConnConfig())
}

// refusedConnection returns the explained error when PostgreSQL refused an
// attempt's connection with "too many clients" (serverfacts.Refused;
// errors.Is(err, pgfixture.ErrTooManyClients)).
func (c *checker) refusedConnection(rep *Report) error {
	return serverfacts.Refused(attemptFacts(rep), c.Srv.ExplainRefused)
}
