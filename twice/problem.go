package twice

import "github.com/twicekit/twicekit/internal/report"

// Problem is a promise a scenario broke besides its rows and effects: an
// attempt panicked, ended its goroutine, hung or got stuck, the queue gave
// up, the job bypassed its handles or opened its own connection, or the
// clean run failed. Decisions (the
// headline, whether the check goes on) use Kind, never Text.
type Problem struct {
	Kind ProblemKind
	// Attempt names the attempt ("attempt 2 of job-1"), or the job
	// ("job-1") when the queue gave up on it; empty for a problem of the
	// whole scenario (a foreign context; a stuck interleaving, whose Text
	// names every attempt and where it was).
	Attempt string
	// Text says it in words, as the report prints it.
	Text string
}

func (p Problem) String() string { return p.Text }

// ProblemKind says which promise a [Problem] broke.
type ProblemKind int

// The kinds of problem.
const (
	// ProblemPanic: an attempt panicked.
	ProblemPanic ProblemKind = iota + 1
	// ProblemGoexit: an attempt called t.FailNow, t.Fatal, testify's
	// require or runtime.Goexit.
	ProblemGoexit
	// ProblemHung: an attempt was still running after AttemptTimeout.
	ProblemHung
	// ProblemStuck: in a concurrent scenario an attempt waited outside
	// PostgreSQL (a mutex, a channel, a sleep).
	ProblemStuck
	// ProblemGaveUp: the queue gave up after MaxDeliveries.
	ProblemGaveUp
	// ProblemForeignContext: the job made calls with a context that is not
	// the attempt's.
	ProblemForeignContext
	// ProblemCleanRunFailed: the reference run returned an error.
	ProblemCleanRunFailed
	// ProblemForeignSession: the job opened its own connection to the
	// check's database (a session the check did not open, or a clean run
	// that changed the database with no statement the check saw): its
	// statements are not seen.
	ProblemForeignSession
	// ProblemSlow: an attempt was still running a statement in PostgreSQL
	// after AttemptTimeout: slow, not hung (slow.go).
	ProblemSlow
	// ProblemAfterRun: a goroutine the attempt started kept using the
	// attempt's handles after Run returned (after_run.go).
	ProblemAfterRun
)

func (k ProblemKind) String() string { return report.ProblemName(int(k)) }
