package handles

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/internal/inject"
)

// ConnectionsOwner names a check of job and its workers in the error of a
// server whose connection limit it does not fit.
func ConnectionsOwner(job string, workers int) string {
	switch workers {
	case 1:
		return fmt.Sprintf("twice.Check of job %q (1 worker of up to %d connections)", job, inject.MaxConnsPerWorker)
	case 2:
		return fmt.Sprintf("twice.Check of job %q (2 workers of up to %d connections: the check's own and a second for the concurrent scenarios)", job, inject.MaxConnsPerWorker)
	}
	return fmt.Sprintf("twice.Check of job %q (%d workers of up to %d connections: the check's own and two for the concurrent scenarios)", job, workers, inject.MaxConnsPerWorker)
}

// TypeHint is what a report adds to a clean run's error that says pgx does
// not know a type ("" for any other error): an application registers its
// types in its pool's AfterConnect, which the check runs only when given.
func TypeHint(err error) string {
	msg := err.Error()
	for _, s := range []string{"unknown type (OID", "cannot find encode plan", "cannot find decode plan", "unknown OID"} {
		if strings.Contains(msg, s) {
			return "\n(pgx does not know a type here: if the application registers it in its pool's AfterConnect, or sets its pool up otherwise, give the check that configuration: twice.ConfigurePool(func(*pgxpool.Config)))"
		}
	}
	return ""
}
