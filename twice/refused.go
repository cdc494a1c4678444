package twice

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// refusedConnection returns the explained error when PostgreSQL refused an
// attempt's connection with "too many clients" (SQLSTATE 53300): other
// clients filled the server after pgfixture measured its room. The check
// then says so instead of blaming the job (errors.Is(err,
// pgfixture.ErrTooManyClients)).
func (c *checker) refusedConnection(rep *Report) error {
	runs := rep.Scenarios
	if rep.Reference != nil {
		runs = append([]*ScenarioRun{rep.Reference}, runs...)
	}
	for _, sr := range runs {
		for _, a := range sr.Attempts {
			var pgErr *pgconn.PgError
			if a.Err != nil && errors.As(a.Err, &pgErr) && pgErr.Code == "53300" {
				return fmt.Errorf("twice: %s of scenario %s could not connect: %w",
					attemptName(a), sr.Scenario.Token(), c.srv.ExplainRefused(a.Err))
			}
		}
	}
	return nil
}
