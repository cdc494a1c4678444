package twice

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
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

// kindSpec is everything about one scenario kind.
type kindSpec struct {
	// name is the kind's name in the JSON report.
	name string
	// token is the scenario's token, as -twice.run takes it and as
	// parseToken reads it back.
	token func(s Scenario) string
	// words say in a sentence what the queue did; label is the label of the
	// point the fault struck in the run the words describe.
	words func(s Scenario, label string) string
	// perEffect: plan makes this kind's scenarios once for every effect
	// point of the reference run (at is that point), not once per job.
	perEffect bool
	// plan lists this kind's scenarios (nil: the reference run, or the
	// concurrent kinds, which the exploration in concurrent.go plans).
	plan func(p planning, at faults.Step) []Scenario
	// play delivers the job as the scenario says, on the database reset and
	// seeded.
	play func(c *checker, ctx context.Context, sr *ScenarioRun, how playArgs) error
}

// kinds describes every scenario kind, in the order plan lists them.
var kinds = [...]kindSpec{
	Once: {
		name:  "once",
		token: func(Scenario) string { return "once" },
		words: func(Scenario, string) string { return "the reference run (one clean delivery)" },
		play: func(c *checker, ctx context.Context, sr *ScenarioRun, how playArgs) error {
			c.deliverReference(ctx, sr, how.wait)
			return nil
		},
	},
	AckLost: {
		name:  "ack-lost",
		token: func(Scenario) string { return "sequential" },
		words: func(Scenario, string) string {
			return "sequential: the ack was lost and the same job was delivered again"
		},
		plan: func(p planning, _ faults.Step) []Scenario { return []Scenario{{Kind: AckLost}} },
		play: func(c *checker, ctx context.Context, sr *ScenarioRun, _ playArgs) error {
			if c.deliverLosingAck(ctx, sr, job1) {
				c.deliver(ctx, sr, job1, delivery{})
			}
			return nil
		},
	},
	CrashBefore: {
		name:  "crash-before",
		token: func(s Scenario) string { return "crash@" + strconv.Itoa(s.Point) },
		words: func(s Scenario, label string) string {
			if s.afterAck {
				d := fmt.Sprintf("crash after the ack, before point %d of %d", s.Point, s.Of)
				if label != "" {
					d += " (" + label + ")"
				}
				return d + ": the worker died after the ack, before the goroutine's work; the job was acked, so no redelivery"
			}
			d := fmt.Sprintf("crash before point %d of %d", s.Point, s.Of)
			if label != "" {
				d += " (" + label + ")"
			}
			return d + ", then redelivery"
		},
		plan: func(p planning, _ faults.Step) []Scenario {
			var out []Scenario
			for _, i := range p.crashPoints {
				out = append(out, Scenario{Kind: CrashBefore, Point: i, Label: p.steps[i-1].Label, afterAck: p.steps[i-1].AfterAck})
			}
			return out
		},
		play: func(c *checker, ctx context.Context, sr *ScenarioRun, _ playArgs) error {
			c.deliver(ctx, sr, job1, delivery{fault: inject.Plan{CrashBefore: sr.Scenario.Point}})
			return nil
		},
	},
	CrashAfterLast: {
		name:  "crash-after-last",
		token: func(Scenario) string { return "crash@end" },
		words: func(s Scenario, _ string) string {
			if s.beforeAck > 0 {
				return fmt.Sprintf("crash after point %d of %d, the last before the ack, then redelivery", s.beforeAck, s.Of)
			}
			return fmt.Sprintf("crash after the last point (%d of %d), before the ack, then redelivery", s.Of, s.Of)
		},
		plan: func(p planning, _ faults.Step) []Scenario {
			s := Scenario{Kind: CrashAfterLast}
			if n := pointsBeforeAck(p.steps); n < len(p.steps) {
				s.beforeAck = n
			}
			return []Scenario{s}
		},
		play: func(c *checker, ctx context.Context, sr *ScenarioRun, _ playArgs) error {
			c.deliver(ctx, sr, job1, delivery{crashAfterReturn: true})
			return nil
		},
	},
	DuplicateEnqueue: {
		name:  "duplicate-enqueue",
		token: func(Scenario) string { return "duplicate-enqueue" },
		words: func(Scenario, string) string {
			return "duplicate enqueue: the producer enqueued the same payload twice, under two job IDs"
		},
		plan: func(p planning, _ faults.Step) []Scenario {
			if p.cfg.dupEnqueueOff != "" {
				return nil
			}
			return []Scenario{{Kind: DuplicateEnqueue}}
		},
		play: func(c *checker, ctx context.Context, sr *ScenarioRun, _ playArgs) error {
			if c.deliver(ctx, sr, job1, delivery{}) {
				c.deliver(ctx, sr, job2, delivery{})
			}
			return nil
		},
	},
	CrashAfterApply: {
		name:  "crash-after-apply",
		token: func(s Scenario) string { return "crash-after@" + strconv.Itoa(s.Point) },
		words: func(s Scenario, label string) string {
			if s.afterAck {
				return fmt.Sprintf("crash after point %d of %d was applied (%s), after the ack: the worker died before the goroutine heard back; the job was acked, so no redelivery", s.Point, s.Of, label)
			}
			return fmt.Sprintf("crash after point %d of %d was applied (%s), before the job heard back, then redelivery", s.Point, s.Of, label)
		},
		perEffect: true,
		plan: func(p planning, at faults.Step) []Scenario {
			return []Scenario{{Kind: CrashAfterApply, Point: at.Index, Label: at.Label, afterAck: at.AfterAck}}
		},
		play: func(c *checker, ctx context.Context, sr *ScenarioRun, _ playArgs) error {
			c.deliver(ctx, sr, job1, delivery{fault: inject.Plan{CrashAfter: sr.Scenario.Point}})
			return nil
		},
	},
	ReplyLost: {
		name:  "reply-lost",
		token: func(s Scenario) string { return "reply-lost@" + strconv.Itoa(s.Point) },
		words: func(s Scenario, label string) string {
			return fmt.Sprintf("reply lost at point %d of %d (%s): applied, but the job saw a timeout", s.Point, s.Of, label)
		},
		perEffect: true,
		plan: func(p planning, at faults.Step) []Scenario {
			return []Scenario{{Kind: ReplyLost, Point: at.Index, Label: at.Label}}
		},
		play: func(c *checker, ctx context.Context, sr *ScenarioRun, _ playArgs) error {
			c.deliver(ctx, sr, job1, delivery{fault: inject.Plan{LoseReply: sr.Scenario.Point}})
			return nil
		},
	},
	Redrive: {
		name: "late-redrive",
		token: func(s Scenario) string {
			return "redrive-" + shortDuration(s.After) + "@" + strconv.Itoa(s.Point)
		},
		words: func(s Scenario, label string) string {
			return fmt.Sprintf("late redrive: crash after point %d of %d was applied (%s), redriven after %s", s.Point, s.Of, label, shortDuration(s.After))
		},
		perEffect: true,
		plan: func(p planning, at faults.Step) []Scenario {
			var out []Scenario
			for _, d := range p.cfg.redrives {
				out = append(out, Scenario{Kind: Redrive, Point: at.Index, Label: at.Label, After: d})
			}
			return out
		},
		play: func(c *checker, ctx context.Context, sr *ScenarioRun, _ playArgs) error {
			s := sr.Scenario
			c.deliver(ctx, sr, job1, delivery{fault: inject.Plan{CrashAfter: s.Point}, redriveAfter: s.After})
			return nil
		},
	},
	Interleaved: {
		name:  "concurrent",
		token: func(s Scenario) string { return "concurrent:" + s.Schedule },
		words: func(s Scenario, _ string) string {
			return fmt.Sprintf("concurrent: two deliveries of the same job at once, interleaved %s (A is the first delivery, B the second)", s.Schedule)
		},
		play: playConcurrentKind,
	},
	Overlap: {
		name:  "overlap",
		token: func(s Scenario) string { return "overlap@" + strconv.Itoa(s.Point) },
		words: func(s Scenario, _ string) string {
			return fmt.Sprintf("overlap after point %d of %d: the visibility timeout ran out while the first delivery was there; a second delivery ran to the end, then the first resumed", s.Point, s.Of)
		},
		play: playConcurrentKind,
	},
	DuplicateOverlap: {
		name:  "duplicate-overlap",
		token: func(s Scenario) string { return "duplicate-overlap@" + strconv.Itoa(s.Point) },
		words: func(s Scenario, _ string) string {
			return fmt.Sprintf("concurrent duplicate enqueue: the producer enqueued the job twice and two workers took both copies at once; job-1 paused after point %d of %d while job-2 ran to the end, then job-1 resumed", s.Point, s.Of)
		},
		play: playDuplicateKind,
	},
	DuplicateInterleaved: {
		name:  "duplicate-concurrent",
		token: func(s Scenario) string { return "duplicate-concurrent:" + s.Schedule },
		words: func(s Scenario, _ string) string {
			return fmt.Sprintf("concurrent duplicate enqueue: the producer enqueued the job twice and two workers took both copies at once, interleaved %s (A is job-1, B job-2)", s.Schedule)
		},
		play: playDuplicateKind,
	},
	StatementReplyLost: {
		name:  "statement-reply-lost",
		token: func(s Scenario) string { return "sql-reply-lost@" + strconv.Itoa(s.Point) },
		words: func(s Scenario, label string) string {
			return fmt.Sprintf("reply lost at point %d of %d (%s): PostgreSQL applied and committed it, but the job saw a connection error", s.Point, s.Of, label)
		},
		// Once for every statement of the reference run that commits (an
		// autocommit statement, a COMMIT) among the crash points the budget
		// keeps, when the budget says StatementRepliesLost or the check
		// asks with LoseStatementReplies.
		plan: func(p planning, _ faults.Step) []Scenario {
			if !p.loseReplies {
				return nil
			}
			var out []Scenario
			for _, i := range p.crashPoints {
				if st := p.steps[i-1]; st.Commits() {
					out = append(out, Scenario{Kind: StatementReplyLost, Point: i, Label: st.Label})
				}
			}
			return out
		},
		play: func(c *checker, ctx context.Context, sr *ScenarioRun, _ playArgs) error {
			c.deliver(ctx, sr, job1, delivery{fault: inject.Plan{LoseReply: sr.Scenario.Point}})
			return nil
		},
	},
}

// The job IDs a scenario delivers: a duplicate enqueue adds job-2.
const job1, job2 = "job-1", "job-2"

func playConcurrentKind(c *checker, ctx context.Context, sr *ScenarioRun, how playArgs) error {
	return c.playConcurrent(ctx, sr, sameJob.Jobs, how.chooser)
}

func playDuplicateKind(c *checker, ctx context.Context, sr *ScenarioRun, how playArgs) error {
	return c.playConcurrent(ctx, sr, duplicateJobs.Jobs, how.chooser)
}

// spec is the kind's description; a kind outside the table has none.
func (k ScenarioKind) spec() (kindSpec, bool) {
	if k < 0 || int(k) >= len(kinds) || kinds[k].token == nil {
		return kindSpec{}, false
	}
	return kinds[k], true
}

// String is the kind's name as the JSON report writes it ("crash-before").
func (k ScenarioKind) String() string {
	if d, ok := k.spec(); ok {
		return d.name
	}
	return fmt.Sprintf("kind-%d", int(k))
}

// Token is the scenario's short name, as -twice.run takes it.
func (s Scenario) Token() string {
	if d, ok := s.Kind.spec(); ok {
		return d.token(s)
	}
	return fmt.Sprintf("scenario(%d)", int(s.Kind))
}

// Describe says in words what the queue did.
func (s Scenario) Describe() string { return s.words(s.Label) }

// words is Describe with the label of the point the fault struck in a run.
func (s Scenario) words(label string) string {
	if d, ok := s.Kind.spec(); ok {
		return d.words(s, label)
	}
	return s.Token()
}

// planning is what the planners of the kinds see.
type planning struct {
	cfg         *config
	steps       []faults.Step // the reference run's points
	crashPoints []int         // the crash points the budget keeps
	loseReplies bool          // plan the statement reply-lost scenarios
}

// plan lists the scenarios for a reference run with these points: each
// kind's, in the table's order, the per-job kinds first and then, for every
// effect point, the per-effect kinds. Under the quick and default budgets a
// long job's crash points are thinned (see thin.KeepPoints); crashes records how
// many were kept.
func plan(steps []faults.Step, cfg *config, crashes *thin.LeftOut) ([]Scenario, error) {
	n := len(steps)
	p := planning{cfg: cfg, steps: steps, crashPoints: thin.KeepPoints(steps, n, 0), loseReplies: true}
	if cfg.only == "" {
		b, err := cfg.conc.resolveBudget()
		if err != nil {
			return nil, usage(err)
		}
		p.crashPoints = thin.KeepPoints(steps, n, b.CrashPoints)
		p.loseReplies = b.StatementRepliesLost || cfg.loseReplies
		crashes.Budget = b.Name
	}
	crashes.Crashes, crashes.CrashPoints = len(p.crashPoints), n
	var all []Scenario
	add := func(ss []Scenario) {
		for _, s := range ss {
			s.Of = n
			all = append(all, s)
		}
	}
	for _, d := range kinds {
		if d.plan != nil && !d.perEffect {
			add(d.plan(p, faults.Step{}))
		}
	}
	for _, st := range steps {
		if st.Kind != faults.Effect {
			continue
		}
		for _, d := range kinds {
			if d.plan != nil && d.perEffect {
				add(d.plan(p, st))
			}
		}
	}
	if cfg.only == "" {
		return all, nil
	}
	if isConcurrentToken(cfg.only) {
		return nil, nil // runConcurrent plays it
	}
	var tokens []string
	for _, s := range all {
		if s.Token() == cfg.only {
			return []Scenario{s}, nil
		}
		tokens = append(tokens, s.Token())
	}
	return nil, unknownOnly(cfg.only, n, len(concurrentPoints(steps)), tokens, cfg)
}

// parseToken reads a scenario's token back into its kind and arguments
// (Point, After, Schedule); Of and Label come from the reference run.
func parseToken(token string) (Scenario, error) {
	at := func(prefix string) (int, bool) {
		rest, ok := strings.CutPrefix(token, prefix)
		if !ok {
			return 0, false
		}
		n, err := strconv.Atoi(rest)
		return n, err == nil && n >= 1 && strconv.Itoa(n) == rest
	}
	for k, d := range kinds {
		if d.token == nil {
			continue
		}
		kind := ScenarioKind(k)
		if token == d.token(Scenario{Kind: kind}) && !strings.HasSuffix(token, "@0") && !strings.HasSuffix(token, ":") {
			return Scenario{Kind: kind}, nil
		}
	}
	switch {
	case strings.HasPrefix(token, "concurrent:") && len(token) > len("concurrent:"):
		return Scenario{Kind: Interleaved, Schedule: strings.TrimPrefix(token, "concurrent:")}, nil
	case strings.HasPrefix(token, "duplicate-concurrent:") && len(token) > len("duplicate-concurrent:"):
		return Scenario{Kind: DuplicateInterleaved, Schedule: strings.TrimPrefix(token, "duplicate-concurrent:")}, nil
	case strings.HasPrefix(token, "redrive-"):
		dur, point, ok := strings.Cut(strings.TrimPrefix(token, "redrive-"), "@")
		d, err := time.ParseDuration(dur)
		n, nerr := strconv.Atoi(point)
		if ok && err == nil && nerr == nil && n >= 1 && d > 0 {
			return Scenario{Kind: Redrive, Point: n, After: d}, nil
		}
	}
	for _, k := range []ScenarioKind{CrashBefore, CrashAfterApply, ReplyLost, Overlap, DuplicateOverlap, StatementReplyLost} {
		prefix := strings.TrimSuffix(kinds[k].token(Scenario{Kind: k}), "0")
		if n, ok := at(prefix); ok {
			return Scenario{Kind: k, Point: n}, nil
		}
	}
	return Scenario{}, fmt.Errorf("twice: %q is not a scenario token (tokens look like once, sequential, crash@3, crash@end, duplicate-enqueue, crash-after@2, reply-lost@2, sql-reply-lost@1, redrive-48h@2, overlap@1, concurrent:A2B2A, duplicate-overlap@1, duplicate-concurrent:A2B2A)", token)
}

// isConcurrentToken tells the tokens of concurrent scenarios ("concurrent:…",
// "overlap@…", and the concurrent duplicates' "duplicate-concurrent:…",
// "duplicate-overlap@…") from the sequential ones.
func isConcurrentToken(t string) bool {
	return strings.HasPrefix(t, "concurrent:") || strings.HasPrefix(t, "overlap@") || isDuplicateToken(t)
}

// isDuplicateToken tells the tokens of the concurrent duplicates.
func isDuplicateToken(t string) bool {
	return strings.HasPrefix(t, "duplicate-concurrent:") || strings.HasPrefix(t, "duplicate-overlap@")
}

// shortDuration prints whole hours as "48h", whole minutes as "90m", and
// anything else as Go does.
func shortDuration(d time.Duration) string {
	switch {
	case d > 0 && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d > 0 && d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return d.String()
}
