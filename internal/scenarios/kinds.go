package scenarios

import (
	"fmt"
	"strconv"
	"time"

	"github.com/twicekit/twicekit/faults"
)

// Kind says how the queue misbehaves in a scenario: twice's ScenarioKind,
// whose constants are in the same order (twice's doc comments say what
// each kind is).
type Kind int

// The scenario kinds, in twice's order.
const (
	Once Kind = iota
	AckLost
	CrashBefore
	CrashAfterLast
	DuplicateEnqueue
	CrashAfterApply
	ReplyLost
	Redrive
	Interleaved
	Overlap
	DuplicateOverlap
	DuplicateInterleaved
	StatementReplyLost
)

// NumKinds is how many kinds the table describes.
const NumKinds = len(kinds)

// Scenario is one way a queue delivers the job: twice's Scenario, field for
// field.
type Scenario struct {
	Kind Kind
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

	// AfterAck: point Point came after the ack, from a goroutine on a
	// context that outlives the attempt.
	AfterAck bool
	// BeforeAck is how many of the reference run's points came before the
	// ack, when some came after it (0 otherwise).
	BeforeAck int
}

// kindSpec is everything about one scenario kind but how it is played,
// which twice keeps.
type kindSpec struct {
	// name is the kind's name in the JSON report.
	name string
	// token is the scenario's token, as -twice.run takes it and as
	// ParseToken reads it back.
	token func(s Scenario) string
	// words say in a sentence what the queue did; label is the label of the
	// point the fault struck in the run the words describe.
	words func(s Scenario, label string) string
	// perEffect: Plan makes this kind's scenarios once for every effect
	// point of the reference run (at is that point), not once per job.
	perEffect bool
	// plan lists this kind's scenarios (nil: the reference run, or the
	// concurrent kinds, which the exploration in twice's concurrent.go
	// plans).
	plan func(p Planning, at faults.Step) []Scenario
}

// kinds describes every scenario kind, in the order Plan lists them.
var kinds = [...]kindSpec{
	Once: {
		name:  "once",
		token: func(Scenario) string { return "once" },
		words: func(Scenario, string) string { return "the reference run (one clean delivery)" },
	},
	AckLost: {
		name:  "ack-lost",
		token: func(Scenario) string { return "sequential" },
		words: func(Scenario, string) string {
			return "sequential: the ack was lost and the same job was delivered again"
		},
		plan: func(p Planning, _ faults.Step) []Scenario { return []Scenario{{Kind: AckLost}} },
	},
	CrashBefore: {
		name:  "crash-before",
		token: func(s Scenario) string { return "crash@" + strconv.Itoa(s.Point) },
		words: func(s Scenario, label string) string {
			if s.AfterAck {
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
		plan: func(p Planning, _ faults.Step) []Scenario {
			var out []Scenario
			for _, i := range p.CrashPoints {
				out = append(out, Scenario{Kind: CrashBefore, Point: i, Label: p.Steps[i-1].Label, AfterAck: p.Steps[i-1].AfterAck})
			}
			return out
		},
	},
	CrashAfterLast: {
		name:  "crash-after-last",
		token: func(Scenario) string { return "crash@end" },
		words: func(s Scenario, _ string) string {
			if s.BeforeAck > 0 {
				return fmt.Sprintf("crash after point %d of %d, the last before the ack, then redelivery", s.BeforeAck, s.Of)
			}
			return fmt.Sprintf("crash after the last point (%d of %d), before the ack, then redelivery", s.Of, s.Of)
		},
		plan: func(p Planning, _ faults.Step) []Scenario {
			s := Scenario{Kind: CrashAfterLast}
			if n := p.BeforeAck; n < len(p.Steps) {
				s.BeforeAck = n
			}
			return []Scenario{s}
		},
	},
	DuplicateEnqueue: {
		name:  "duplicate-enqueue",
		token: func(Scenario) string { return "duplicate-enqueue" },
		words: func(Scenario, string) string {
			return "duplicate enqueue: the producer enqueued the same payload twice, under two job IDs"
		},
		plan: func(p Planning, _ faults.Step) []Scenario {
			if p.DupEnqueueOff != "" {
				return nil
			}
			return []Scenario{{Kind: DuplicateEnqueue}}
		},
	},
	CrashAfterApply: {
		name:  "crash-after-apply",
		token: func(s Scenario) string { return "crash-after@" + strconv.Itoa(s.Point) },
		words: func(s Scenario, label string) string {
			if s.AfterAck {
				return fmt.Sprintf("crash after point %d of %d was applied (%s), after the ack: the worker died before the goroutine heard back; the job was acked, so no redelivery", s.Point, s.Of, label)
			}
			return fmt.Sprintf("crash after point %d of %d was applied (%s), before the job heard back, then redelivery", s.Point, s.Of, label)
		},
		perEffect: true,
		plan: func(p Planning, at faults.Step) []Scenario {
			return []Scenario{{Kind: CrashAfterApply, Point: at.Index, Label: at.Label, AfterAck: at.AfterAck}}
		},
	},
	ReplyLost: {
		name:  "reply-lost",
		token: func(s Scenario) string { return "reply-lost@" + strconv.Itoa(s.Point) },
		words: func(s Scenario, label string) string {
			return fmt.Sprintf("reply lost at point %d of %d (%s): applied, but the job saw a timeout", s.Point, s.Of, label)
		},
		perEffect: true,
		plan: func(p Planning, at faults.Step) []Scenario {
			return []Scenario{{Kind: ReplyLost, Point: at.Index, Label: at.Label}}
		},
	},
	Redrive: {
		name: "late-redrive",
		token: func(s Scenario) string {
			return "redrive-" + ShortDuration(s.After) + "@" + strconv.Itoa(s.Point)
		},
		words: func(s Scenario, label string) string {
			return fmt.Sprintf("late redrive: crash after point %d of %d was applied (%s), redriven after %s", s.Point, s.Of, label, ShortDuration(s.After))
		},
		perEffect: true,
		plan: func(p Planning, at faults.Step) []Scenario {
			var out []Scenario
			for _, d := range p.Redrives {
				out = append(out, Scenario{Kind: Redrive, Point: at.Index, Label: at.Label, After: d})
			}
			return out
		},
	},
	Interleaved: {
		name:  "concurrent",
		token: func(s Scenario) string { return "concurrent:" + s.Schedule },
		words: func(s Scenario, _ string) string {
			return fmt.Sprintf("concurrent: two deliveries of the same job at once, interleaved %s (A is the first delivery, B the second)", s.Schedule)
		},
	},
	Overlap: {
		name:  "overlap",
		token: func(s Scenario) string { return "overlap@" + strconv.Itoa(s.Point) },
		words: func(s Scenario, _ string) string {
			return fmt.Sprintf("overlap after point %d of %d: the visibility timeout ran out while the first delivery was there; a second delivery ran to the end, then the first resumed", s.Point, s.Of)
		},
	},
	DuplicateOverlap: {
		name:  "duplicate-overlap",
		token: func(s Scenario) string { return "duplicate-overlap@" + strconv.Itoa(s.Point) },
		words: func(s Scenario, _ string) string {
			return fmt.Sprintf("concurrent duplicate enqueue: the producer enqueued the job twice and two workers took both copies at once; job-1 paused after point %d of %d while job-2 ran to the end, then job-1 resumed", s.Point, s.Of)
		},
	},
	DuplicateInterleaved: {
		name:  "duplicate-concurrent",
		token: func(s Scenario) string { return "duplicate-concurrent:" + s.Schedule },
		words: func(s Scenario, _ string) string {
			return fmt.Sprintf("concurrent duplicate enqueue: the producer enqueued the job twice and two workers took both copies at once, interleaved %s (A is job-1, B job-2)", s.Schedule)
		},
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
		plan: func(p Planning, _ faults.Step) []Scenario {
			if !p.LoseReplies {
				return nil
			}
			var out []Scenario
			for _, i := range p.CrashPoints {
				if st := p.Steps[i-1]; st.Commits() {
					out = append(out, Scenario{Kind: StatementReplyLost, Point: i, Label: st.Label})
				}
			}
			return out
		},
	},
}

// spec is the kind's description; a kind outside the table has none.
func (k Kind) spec() (kindSpec, bool) {
	if k < 0 || int(k) >= len(kinds) || kinds[k].token == nil {
		return kindSpec{}, false
	}
	return kinds[k], true
}

// Planned reports whether Plan plans the kind's scenarios (the reference
// run and the concurrent kinds it does not).
func (k Kind) Planned() bool {
	d, ok := k.spec()
	return ok && d.plan != nil
}

// String is the kind's name as the JSON report writes it ("crash-before").
func (k Kind) String() string {
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
func (s Scenario) Describe() string { return s.Words(s.Label) }

// Words is Describe with the label of the point the fault struck in a run.
func (s Scenario) Words(label string) string {
	if d, ok := s.Kind.spec(); ok {
		return d.words(s, label)
	}
	return s.Token()
}
