package serverfacts

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// Refused returns the explained error when PostgreSQL refused an
// attempt's connection with "too many clients" (SQLSTATE 53300): other
// clients filled the server after pgfixture measured its room. explain is
// the server's explanation of such an error (pgfixture's ExplainRefused).
func Refused(attempts []Attempt, explain func(error) error) error {
	for _, a := range attempts {
		var pgErr *pgconn.PgError
		if a.Err != nil && errors.As(a.Err, &pgErr) && pgErr.Code == "53300" {
			return fmt.Errorf("twice: %s of scenario %s could not connect: %w",
				a.Name, a.Scenario, explain(a.Err))
		}
	}
	return nil
}
