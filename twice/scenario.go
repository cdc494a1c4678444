package twice

import (
	"context"
	"time"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/scenarios"
	"github.com/twicekit/twicekit/internal/thin"
)

// ScenarioKind says how the queue misbehaves in a scenario. Each kind is
// described once, in the table kinds below: its token, its words, how it is
// planned and how it is played.
type ScenarioKind int

// The scenarios of a check.
const (
	// Once is the reference run: one clean delivery that succeeds (after
	// the deliveries that snoozed, if the job snoozes: SnoozeError).
	Once ScenarioKind = iota
	// AckLost: the attempt succeeds, its ack is lost, the same job ID is
	// delivered again. Token "sequential".
	AckLost
	// CrashBefore: the first attempt dies just before point N, then the job is
	// redelivered until an attempt succeeds. Token "crash@N".
	CrashBefore
	// CrashAfterLast: the first attempt does all its work and dies before the
	// ack (its connections cut), then the job is redelivered. Token
	// "crash@end".
	CrashAfterLast
	// DuplicateEnqueue: the producer enqueued the same payload twice, under
	// two job IDs. Token "duplicate-enqueue".
	DuplicateEnqueue
	// CrashAfterApply: the first attempt dies right after the effect of
	// point N was applied (the provider did it; the worker never heard back),
	// then the job is redelivered. Token "crash-after@N".
	CrashAfterApply
	// ReplyLost: the effect of point N is applied but its reply is lost; the
	// job sees a timeout and carries on (usually returning an error, so the
	// queue redelivers). Token "reply-lost@N".
	ReplyLost
	// Redrive: like CrashAfterApply, but the redelivery comes After later on
	// the check's clock (a human redriving a dead job), past the providers'
	// idempotency-key windows. Token "redrive-48h@N"; see [LateRedrive].
	Redrive
	// Interleaved: two attempts of the same job at once (the visibility
	// timeout ran out), interleaved point by point as Schedule says. Token
	// "concurrent:A2B3A".
	Interleaved
	// Overlap: two attempts at once; the first pauses after its point Point,
	// the second runs to the end, then the first resumes. Token "overlap@N".
	Overlap
	// DuplicateOverlap: the producer enqueued the job twice and two workers
	// took both copies at once (job-1 and job-2); job-1 pauses after its
	// point Point, job-2 runs to the end, then job-1 resumes. Token
	// "duplicate-overlap@N".
	DuplicateOverlap
	// DuplicateInterleaved: both copies of a duplicate enqueue at once,
	// interleaved point by point as Schedule says (A is job-1, B job-2).
	// Token "duplicate-concurrent:A2B3A".
	DuplicateInterleaved
	// StatementReplyLost: PostgreSQL applied and committed the statement at
	// point N (an autocommit statement or a COMMIT), then the connection
	// broke before its reply; the job sees a connection error and carries on
	// as in production, and the queue does what it does with the outcome.
	// Token "sql-reply-lost@N".
	StatementReplyLost
)

// Scenario is one way a queue delivers the job.
type Scenario struct {
	Kind ScenarioKind
	// Point is the point the fault strikes: CrashBefore crashes just before
	// it; CrashAfterApply, ReplyLost and Redrive strike the effect call at
	// it; StatementReplyLost loses the reply of the statement at it; Overlap
	// pauses the first attempt after it. It is 0 for the other kinds.
	Point int
	// Label is the label of point Point in the reference run ("" when Point
	// is 0).
	Label string
	// Of is the number of points of the reference run.
	Of int
	// After is how much later a Redrive scenario redelivers.
	After time.Duration
	// Schedule is the token of an Interleaved scenario's interleaving
	// (concurrent.Schedule: "A2B3A").
	Schedule string

	// afterAck: point Point came after the ack, from a goroutine on a
	// context that outlives the attempt.
	afterAck bool
	// beforeAck is how many of the reference run's points came before the
	// ack, when some came after it (0 otherwise).
	beforeAck int
}

// playFunc delivers the job as the scenario says, on the database reset
// and seeded.
type playFunc func(c *checker, ctx context.Context, sr *ScenarioRun, how playArgs) error

// The job ID a scenario delivers (a duplicate enqueue adds job-2).
const job1 = scenarios.Job1

// play is how the kind is played (scenarios.Play, through the checker); a
// kind outside the table has none.
func (k ScenarioKind) play() (playFunc, bool) {
	if !scenarios.Kind(k).Playable() {
		return nil, false
	}
	return func(c *checker, ctx context.Context, sr *ScenarioRun, how playArgs) error {
		return scenarios.Play(scenarios.Player{
			Reference: func() { c.deliverReference(ctx, sr, how.wait) },
			LosingAck: func(job string) bool { return c.deliverLosingAck(ctx, sr, job) },
			Deliver: func(job string, d scenarios.Delivery) bool {
				return c.deliver(ctx, sr, job, delivery{fault: d.Fault, crashAfterReturn: d.CrashAfterReturn, redriveAfter: d.RedriveAfter})
			},
			Concurrent: func(duplicate bool) error {
				pair := sameJob
				if duplicate {
					pair = duplicateJobs
				}
				return c.playConcurrent(ctx, sr, pair.Jobs, how.chooser)
			},
		}, sr.Scenario.internal())
	}, true
}

// String is the kind's name as the JSON report writes it ("crash-before").
func (k ScenarioKind) String() string { return scenarios.Kind(k).String() }

// Token is the scenario's short name, as -twice.run takes it.
func (s Scenario) Token() string { return s.internal().Token() }

// Describe says in words what the queue did.
func (s Scenario) Describe() string { return s.words(s.Label) }

// words is Describe with the label of the point the fault struck in a run.
func (s Scenario) words(label string) string { return s.internal().Words(label) }

// internal is the scenario as internal/scenarios describes it.
func (s Scenario) internal() scenarios.Scenario {
	return scenarios.Scenario{Kind: scenarios.Kind(s.Kind), Point: s.Point, Label: s.Label, Of: s.Of, After: s.After, Schedule: s.Schedule, AfterAck: s.afterAck, BeforeAck: s.beforeAck}
}

// scenarioOf is an internal/scenarios scenario as twice's.
func scenarioOf(s scenarios.Scenario) Scenario {
	return Scenario{Kind: ScenarioKind(s.Kind), Point: s.Point, Label: s.Label, Of: s.Of, After: s.After, Schedule: s.Schedule, afterAck: s.AfterAck, beforeAck: s.BeforeAck}
}

// plan lists the scenarios for a reference run with these points
// (scenarios.Plan). Under the quick and default budgets a long job's crash
// points are thinned (see thin.KeepPoints); crashes records how many were
// kept. With Only it keeps the scenario Only names (scenarios.Only).
func plan(steps []faults.Step, cfg *config, crashes *thin.LeftOut) ([]Scenario, error) {
	n := len(steps)
	p := scenarios.Planning{Steps: steps, CrashPoints: thin.KeepPoints(steps, n, 0), LoseReplies: true, BeforeAck: pointsBeforeAck(steps), Redrives: cfg.Redrives, DupEnqueueOff: cfg.DupEnqueueOff}
	if cfg.Only == "" {
		b, err := cfg.resolveBudget()
		if err != nil {
			return nil, usage(err)
		}
		p.CrashPoints = thin.KeepPoints(steps, n, b.CrashPoints)
		p.LoseReplies = b.StatementRepliesLost || cfg.LoseReplies
		crashes.Budget = b.Name
	}
	crashes.Crashes, crashes.CrashPoints = len(p.CrashPoints), n
	planned := scenarios.Plan(p)
	if cfg.Only != "" { // a concurrent token keeps none: runConcurrent plays it
		var tokens []string
		var ok bool
		if planned, tokens, ok = scenarios.Only(planned, cfg.Only); !ok {
			return nil, usage(cfg.UnknownOnly(n, len(concurrentPoints(steps)), tokens))
		}
	}
	var all []Scenario
	for _, s := range planned {
		all = append(all, scenarioOf(s))
	}
	return all, nil
}

// isConcurrentToken tells the tokens of concurrent scenarios from the
// sequential ones (scenarios.IsConcurrentToken).
func isConcurrentToken(t string) bool { return scenarios.IsConcurrentToken(t) }

// isDuplicateToken tells the tokens of the concurrent duplicates.
func isDuplicateToken(t string) bool { return scenarios.IsDuplicateToken(t) }

// shortDuration prints whole hours as "48h", whole minutes as "90m", and
// anything else as Go does.
func shortDuration(d time.Duration) string { return scenarios.ShortDuration(d) }
