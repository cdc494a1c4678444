package twice

import (
	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/compare"
	"github.com/twicekit/twicekit/internal/findings"
	"github.com/twicekit/twicekit/internal/queue"
	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/pgfixture"
)

// ScenarioRun is what a check saw of one scenario: how each attempt went,
// what the database and the effect log held afterwards, and the verdict.
// [Report.Reference] and [Report.Scenarios] hold them.
type ScenarioRun struct {
	// Scenario is what the queue did.
	Scenario Scenario
	// Verdict says whether the scenario kept every promise.
	Verdict Verdict
	// Attempts lists every delivery of the scenario, in the order they
	// started (the two attempts of a concurrent scenario first).
	Attempts []AttemptRecord
	// Problems lists what broke besides the rows and the effects: panics,
	// hangs, give-ups, a context that is not the attempt's.
	Problems []Problem
	// Snapshot is the database after the scenario.
	Snapshot *pgfixture.Snapshot
	// Effects is the effect log after the scenario.
	Effects []effects.Effect
	// Foreign lists the effect calls refused because they were made with a
	// context that is not the attempt's.
	Foreign []string
	// Rejected lists the requests the payment provider refused.
	Rejected []effects.Rejection
	// Sessions lists the sessions on the check's database that the check
	// did not open (the job's own connections): seen while the reference
	// run's attempt ran, or still open when a scenario's attempts were
	// over.
	Sessions []Session

	numbers map[string]int
	// The follow-ups it worked, the kinds it left as rows for want of a
	// worker, and the limit it stopped at (internal/queue).
	followUps        queue.Worked
	followUpProblems []Problem          // what went wrong with the follow-ups: a reference run's are a finding
	varying          *compare.Varying   // the reference's: what differs between two clean runs (internal/compare/varying.go)
	keyCopies        *compare.KeyCopies // the reference's: where it copies generated keys (internal/compare/generatedkeys.go)
	interleaving     *interleaving      // what the scheduler did in a concurrent scenario
}

// Token is the scenario's token, as -twice.run takes it.
func (sr *ScenarioRun) Token() string { return sr.Scenario.Token() }

// Verdict says whether a scenario kept every promise.
type Verdict int

// The verdicts.
const (
	// Kept: the rows and the effects equal one clean run, and no attempt
	// panicked, hung or bypassed its handles.
	Kept Verdict = iota + 1
	// Broken: the scenario broke a promise; the report has its Finding.
	Broken
)

func (v Verdict) String() string { return report.VerdictName(int(v)) }

// AttemptRecord is what a check saw of one attempt (one delivery of the job).
type AttemptRecord struct {
	// JobID is the queue's ID of the job ("job-1"; a duplicate enqueue
	// delivers "job-2" too), and Number counts its deliveries from 1.
	JobID  string
	Number int
	// Points lists the points the attempt reached, in order.
	Points []faults.Step
	// Crashed says the check crashed the attempt: CrashAt is the point it
	// was refused (Index 0: between points) and Reason says why.
	Crashed bool
	CrashAt faults.Step
	Reason  string
	// Err is what the job returned.
	Err error
	// Panic is the panic value and the cleaned stack; Goexit the job's line
	// that ended the goroutine (t.FailNow, t.Fatal, runtime.Goexit).
	Panic  string
	Goexit string
	// Hung: still running after AttemptTimeout. Leaked: it did not return
	// even after its context was cancelled.
	Hung   bool
	Leaked bool
	// Slow: when Hung, its latest statement was still running in
	// PostgreSQL (a slow job, not one doing nothing).
	Slow bool
	// LockHolder: when Slow, who holds the lock its latest statement was
	// waiting for ("attempt 1 of job-1 (its point 2: SELECT … FOR
	// UPDATE)", "a session the check did not open (application_name
	// psql)"); empty when it waited for no lock.
	LockHolder string
	// SessionState says what earlier deliveries of the scenario had left on
	// the worker's idle sessions as the attempt started ("attempt 1 of job-1
	// left temporary table scratch, advisory lock (42)"): a temporary
	// table, a session advisory lock, a parameter SET for the session, a
	// statement made with SQL PREPARE, a LISTEN. It is empty for a first
	// delivery, which starts on fresh sessions, and when nothing was left.
	SessionState string
	// AfterRun holds the first call a goroutine the attempt started made
	// on its handles after Run returned (refused); empty when none did.
	// A goroutine still running when the check stopped waiting for it
	// (afterRunWait) is an entry too.
	AfterRun []string
	// afterRunSites are where the goroutines that made the refused calls
	// were started ("pkg.f.func1 at dir/file.go:12"), sorted, each once.
	afterRunSites []string
	// outlived: a goroutine the attempt started still ran when the check
	// stopped waiting for it.
	outlived bool
	// crashedAfterAck: the crash struck a point after the ack (a goroutine
	// on a context that outlives the attempt): the queue does not deliver
	// the job again for it.
	crashedAfterAck bool
	// CrashedBeforeAck: the attempt returned, then the check crashed it
	// before the ack (the crash@end scenario). In the AckLost scenario the
	// attempt returns normally and the queue loses its ack: that shows in
	// the redelivery, not here.
	CrashedBeforeAck bool
	// closedPool: the attempt's statements failed because its worker's
	// pool, a.Pool, was closed (closed_pool.go).
	closedPool bool

	// What the queue made of it (queue.go).
	Acked        bool   // the ack had committed in the job's own transaction
	Terminal     bool   // returned an error that ends the job
	NotDelivered bool   // the queue would not deliver it (Note says why)
	Note         string // the queue's words, printed under the attempt

	kind string // a follow-up's kind (followups.go)
}

// Name is "attempt N of JOB", as reports print it.
func (a AttemptRecord) Name() string { return attemptName(a) }

// End says how the attempt ended.
func (a AttemptRecord) End() AttemptEnd {
	return AttemptEnd(findings.EndOf(a.NotDelivered, a.Panic != "", a.Goexit != "", a.Hung, a.CrashedBeforeAck, a.Crashed, a.Err != nil))
}

// AttemptEnd says how an attempt ended.
type AttemptEnd int

// How attempts end.
const (
	// EndReturned: the job returned nil.
	EndReturned AttemptEnd = iota + 1
	// EndError: the job returned an error.
	EndError
	// EndCrashed: the check crashed the attempt (before a point, after an
	// applied effect, or to stop it).
	EndCrashed
	// EndCrashedBeforeAck: the job returned, then the check crashed it
	// before the ack (crash@end).
	EndCrashedBeforeAck
	// EndPanic: the job panicked.
	EndPanic
	// EndGoexit: the job called t.FailNow, t.Fatal or runtime.Goexit.
	EndGoexit
	// EndHung: still running after AttemptTimeout.
	EndHung
	// EndNotDelivered: the queue would not deliver it (Note says why).
	EndNotDelivered
)

func (e AttemptEnd) String() string { return report.EndName(int(e)) }
