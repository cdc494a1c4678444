// Package serverfacts says when a finished check proves nothing about the
// job because of what it ran on, in the check's words. It tells the
// caller's context that ended (caller.go). It marks the errors of the
// machinery a check runs on (infrastructure), and says that the PostgreSQL
// server went away during the check: the check's own work failed as a lost
// server fails, or an attempt did and a fresh connection fails too
// (gone.go). It says that PostgreSQL refused an attempt's connection with
// "too many clients" (refused.go), and that the job closed the check's pool
// (closed_pool.go).
//
// twice keeps the checks' flow and the report: it hands in the attempts of
// a finished check, each as an Attempt (its name, its scenario's token, its
// error, whether it found its pool closed), and puts the error in the
// report. Reading the errors themselves (a server gone, a closed pool) is
// internal/sessions'.
package serverfacts

// Attempt is an attempt of a finished check as this package sees it.
type Attempt struct {
	// Name is the attempt's name in a report ("attempt 2 of job-1").
	Name string
	// Scenario is the token of its scenario.
	Scenario string
	// Err is what its Run returned.
	Err error
	// ClosedPool says that its statements failed because its worker's
	// pool was closed.
	ClosedPool bool
}
