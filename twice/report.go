package twice

import (
	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/internal/reportfmt"
	"github.com/twicekit/twicekit/internal/shard"
)

// Report is the outcome of a check. Its findings' text is a deterministic
// function of the job and the scenarios: no times, process IDs or database
// names (an Idempotency-Key the reference run never sent prints as ‹new key
// N›). Err is another matter: it says why the check could not run, and
// names the server, the database or the driver's own message so that you
// can act on it.
type Report struct {
	// Job is the job's name.
	Job string
	// Findings lists the scenarios that broke a promise: the sequential
	// ones in plan order, then the concurrent ones in the order they ran.
	Findings []Finding
	// Err is set when the check itself could not run: no PostgreSQL, a broken
	// migration, seed data that does not insert, or an internal error.
	Err error
	// KeptDatabase is the masked URL of the database kept for a failed check
	// (see KeepFailedDatabase); empty when none was kept.
	KeptDatabase string
	// Varying lists the columns ("orders.shipped_at") and effect
	// words whose values differ between two clean runs of the job: they are
	// compared by shape and printed as placeholders (see ExactValues). A
	// verbose test (-v) logs them.
	Varying []string

	// Reference is the clean run every scenario is compared with (nil when
	// the check could not run it).
	Reference *ScenarioRun
	// Scenarios lists the scenarios that ran after the reference, in order,
	// each with its Verdict; the broken ones have a Finding too.
	Scenarios []*ScenarioRun

	testName       string
	dupEnqueueOff  string
	concurrencyOff string
	overlapsOff    string // WithoutOverlappingDeliveries
	options        JSONOptions
	stoppedEarly   string     // the scenarios left out after a hang, and why
	leftOut        string     // what the budget left out of a long job
	wallLeft       string     // what the wall budget left out: wall.go
	wallNone       bool       // the wall budget left out every concurrent scenario
	partialOK      string     // PartialCheck's reason: wall.go
	covered        string     // the crash points covered by an earlier one with the same world
	coveredN       int        // how many
	keptNote       string     // what to know about KeptDatabase (local mode: it dies with the binary)
	parallelNote   string     // why fewer scenarios played at once than asked (go test -v only)
	lanes          int        // how many databases played the sequential scenarios
	shard          *shard.Run // the shard this check was, when sharded (internal/shard)
	drawn          []string   // under rapid: the tokens of the scenarios it drew (rapid.go)
}

// OK reports whether the check ran and every scenario kept every promise.
func (r *Report) OK() bool { return r.Err == nil && len(r.Findings) == 0 }

// Partial names, in one line, what the wall budget left out of the check
// (WallBudget); it is "" when the check played every scenario it planned.
// AssertIdempotent and ExpectIdempotent fail a partial check that found
// nothing, unless PartialCheck says why it is enough.
func (r *Report) Partial() string { return r.left().Partial() }

// Tokens lists the scenarios that ran, in order.
func (r *Report) Tokens() []string {
	return report.Map(r.Scenarios, (*ScenarioRun).Token)
}

// String is the report as a test failure prints it: the first finding in
// full, the others by headline with their replay tokens. Control
// characters are escaped (see printableText).
func (r *Report) String() string { return reportfmt.Text(r.text()) }

func (r *Report) text() string { return report.Text(r.finished(false)) }

// left is what the check left out, as internal/report words it.
func (r *Report) left() report.Left {
	return report.Left{
		DupEnqueueOff: r.dupEnqueueOff, ConcurrencyOff: r.concurrencyOff, OverlapsOff: r.overlapsOff,
		StoppedEarly: r.stoppedEarly, LeftOut: r.leftOut, WallLeft: r.wallLeft, WallNone: r.wallNone,
		PartialOK: r.partialOK, Covered: r.covered,
		FollowUps: r.followUpsNote(), // followups.go
		Shard:     r.shard.Text(),
	}
}

// timeline prints the attempts of a scenario, one point a line.
func timeline(sr *ScenarioRun) string { return report.Timeline(runOf(sr).Draw()) }

// replayLine is the one command that replays a scenario.
func replayLine(testName, token string) string { return report.ReplayLine(testName, token) }
