package twice

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/twicekit/twicekit/internal/report"
)

// ReportSchemaVersion is the version of the JSON report's schema
// (docs/report-schema.json). It changes when a field changes meaning or
// goes away; new fields may appear within a version.
const ReportSchemaVersion = 1

// JSONReport is the report as [Report.JSON] writes it: every field a
// deterministic function of the job, the options and the seed, so the same
// check writes the same bytes. Kinds, verdicts and policies are strings.
type JSONReport struct {
	Schema     string         `json:"schema"`
	Version    int            `json:"version"`
	Job        string         `json:"job"`
	Test       string         `json:"test,omitempty"`
	Verdict    string         `json:"verdict"` // "idempotent", "broken" or "error"
	Error      string         `json:"error,omitempty"`
	Options    JSONOptions    `json:"options"`
	Scenarios  []JSONScenario `json:"scenarios"`
	Findings   []JSONFinding  `json:"findings"`
	NotChecked []string       `json:"not_checked,omitempty"`
	// Partial names what the wall budget left out ("": the check played
	// every scenario it planned); PartialOK is PartialCheck's reason.
	Partial   string     `json:"partial,omitempty"`
	PartialOK string     `json:"partial_ok,omitempty"`
	Shard     *JSONShard `json:"shard,omitempty"`
}

// JSONShard is the shard a check played under -twice.shard=k/n: its
// scenarios are the ones that fell to it, and twice-merge joins the n
// shards' reports of the check into one.
type JSONShard struct {
	Index int `json:"index"` // k, from 1
	Of    int `json:"of"`    // n
	// Planned is every sequential scenario the unsharded check plans, in
	// plan order (the same in every shard).
	Planned []string `json:"planned"`
	// Concurrent tells whether this shard played the concurrent scenarios
	// (exactly one shard does).
	Concurrent bool `json:"concurrent"`
}

// JSONOptions are the options that decide what a check ran and accepted.
type JSONOptions struct {
	Budget           string            `json:"budget"`
	Isolation        string            `json:"isolation"`
	Policies         map[string]string `json:"policies,omitempty"`
	DuplicateEnqueue string            `json:"duplicate_enqueue"` // "checked", or the reason it was not
	Concurrency      string            `json:"concurrency"`       // "checked", the reason it was not, or what the wall budget cut
	LateRedrives     []string          `json:"late_redrives,omitempty"`
	Periodic         string            `json:"periodic,omitempty"`   // the Periodic interval, e.g. 1m (PeriodicSchedule: from the clock's start to the next run)
	FollowUps        string            `json:"follow_ups,omitempty"` // WorkFollowUps: "worked, at most N", or "compared before they run"
	MaxDeliveries    int               `json:"max_deliveries"`
	AttemptTimeout   string            `json:"attempt_timeout"`
	Only             string            `json:"only,omitempty"`
	Runner           string            `json:"runner"` // LeaseQueue, LockingConsumer or InProcessScheduler: "lease queue", "locking consumer", "in-process scheduler"
	// FreshSessions: FreshSessionsPerDelivery.
	FreshSessions bool `json:"fresh_sessions_per_delivery,omitempty"`
}

// JSONScenario is one scenario that ran and its verdict.
type JSONScenario struct {
	Token   string `json:"token"`
	Kind    string `json:"kind"`
	Verdict string `json:"verdict"` // "kept" or "broken"
}

// JSONFinding is one scenario that broke a promise.
type JSONFinding struct {
	Token    string          `json:"token"`
	Kind     string          `json:"kind"`
	Headline string          `json:"headline"`
	Timeline []JSONEvent     `json:"timeline"`
	Database []JSONTableDiff `json:"database,omitempty"`
	Effects  []JSONMismatch  `json:"effects,omitempty"`
	Problems []string        `json:"problems,omitempty"`
	Hints    []string        `json:"hints,omitempty"`
	Replay   string          `json:"replay"`
}

// JSONEvent is one line of a finding's timeline: a point an attempt reached,
// a lock wait, or how the attempt ended.
type JSONEvent struct {
	Attempt string `json:"attempt"`           // "attempt 2 of job-1"
	Type    string `json:"type"`              // "point", "blocked", "released" or "end"
	Point   int    `json:"point,omitempty"`   // the point's number in its attempt
	Kind    string `json:"kind,omitempty"`    // the point's kind: "sql", "effect" or "point"
	Label   string `json:"label,omitempty"`   // the point's label, or how the attempt ended
	On      string `json:"on,omitempty"`      // blocked/released: the attempts holding the lock
	Crashed bool   `json:"crashed,omitempty"` // end: the attempt was crashed
}

// JSONTableDiff is how one table differs from the reference run.
type JSONTableDiff struct {
	Table   string   `json:"table"`
	Missing []string `json:"missing"` // rows of the reference run not found (- want)
	Extra   []string `json:"extra"`   // rows found that the reference run has not (+ got)
}

// JSONMismatch is an effect whose count breaks its policy.
type JSONMismatch struct {
	Kind    string `json:"kind"`
	Key     string `json:"key,omitempty"`
	Payload string `json:"payload,omitempty"`
	Policy  string `json:"policy"`
	Want    int    `json:"want"`
	Got     int    `json:"got"`
	Text    string `json:"text"`
}

// optionsOf is the options as the JSON report names them
// (options.Config.JSON), with the budget and the follow-ups.
func optionsOf(cfg *config) JSONOptions {
	o := JSONOptions(cfg.JSON())
	if b, err := cfg.resolveBudget(); err == nil {
		o.Budget = b.Name
	}
	if f := cfg.followUps; f.Pending != nil { // followups.go
		o.FollowUps = fmt.Sprintf("worked, at most %d", cmp.Or(f.Limit, DefaultFollowUpLimit))
		if f.Before {
			o.FollowUps = "compared before they run"
		}
	}
	return o
}

// JSON is the report as versioned JSON (docs/report-schema.json): the same
// check gives the same bytes.
func (r *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r.jsonReport(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("twice: internal error: encoding the report: %w", err)
	}
	return append(b, '\n'), nil
}

// jsonReport is the report as internal/report builds its JSON.
func (r *Report) jsonReport() JSONReport {
	c := report.Checked{
		Finished:  r.finished(true),
		Test:      r.testName,
		Schema:    "https://github.com/twicekit/twicekit/docs/report-schema.json",
		Version:   ReportSchemaVersion,
		Options:   report.JSONOptions(r.options),
		Scenarios: []report.JSONScenario{},
		Partial:   r.Partial(),
		PartialOK: r.partialOK,
	}
	for _, s := range r.Scenarios {
		c.Scenarios = append(c.Scenarios, report.JSONScenario{Token: s.Token(), Kind: s.Scenario.Kind.String(), Verdict: s.Verdict.String()})
	}
	if sh := r.shard; sh != nil {
		c.Shard = &report.JSONShard{Index: sh.K, Of: sh.N, Planned: append([]string{}, sh.Planned...), Concurrent: sh.Concurrent}
	}
	return report.Copy[JSONReport](report.JSON(c))
}
