package twice

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twicekit/twicekit/faults"
)

// ScenarioKind says how the queue misbehaves in a scenario.
type ScenarioKind int

// The scenarios of a check.
const (
	// Once is the reference run: one attempt that succeeds.
	Once ScenarioKind = iota
	// Sequential: the attempt succeeds, its ack is lost, the same job ID is
	// delivered again.
	Sequential
	// CrashBefore: the first attempt dies just before point N, then the job is
	// redelivered until an attempt succeeds.
	CrashBefore
	// CrashAfterLast: the first attempt does all its work and dies before the
	// ack (its connections cut), then the job is redelivered.
	CrashAfterLast
	// DuplicateEnqueue: the producer enqueued the same payload twice, under
	// two job IDs.
	DuplicateEnqueue
	// CrashAfterApply: the first attempt dies right after the effect of
	// point N was applied (the provider did it; the worker never heard back),
	// then the job is redelivered.
	CrashAfterApply
	// ReplyLost: the effect of point N is applied but its reply is lost; the
	// job sees a timeout and carries on (usually returning an error, so the
	// queue redelivers).
	ReplyLost
	// LateRedriveScenario: like CrashAfterApply, but the redelivery comes After
	// later on the check's clock (a human redriving a dead job), past the
	// providers' idempotency-key windows.
	LateRedriveScenario
	// Concurrent: two attempts of the same job at once (the visibility
	// timeout ran out), interleaved point by point as Schedule says.
	Concurrent
	// Overlap: two attempts at once; the first pauses after its point Point,
	// the second runs to the end, then the first resumes.
	Overlap
)

// Scenario is one way a queue delivers the job.
type Scenario struct {
	Kind ScenarioKind
	// Point is the crash point of CrashBefore, and the number of points of
	// the reference run otherwise.
	Point int
	// Of is the number of points of the reference run.
	Of int
	// After is how much later a LateRedriveScenario redelivers.
	After time.Duration
	// Schedule is the token of a Concurrent scenario's interleaving.
	Schedule string
}

// Token is the scenario's short name, as -twice.run takes it.
func (s Scenario) Token() string {
	switch s.Kind {
	case Once:
		return "once"
	case Sequential:
		return "sequential"
	case CrashBefore:
		return "crash@" + strconv.Itoa(s.Point)
	case CrashAfterLast:
		return "crash@end"
	case DuplicateEnqueue:
		return "duplicate-enqueue"
	case CrashAfterApply:
		return "crash-after@" + strconv.Itoa(s.Point)
	case ReplyLost:
		return "reply-lost@" + strconv.Itoa(s.Point)
	case LateRedriveScenario:
		return "redrive-" + shortDuration(s.After) + "@" + strconv.Itoa(s.Point)
	case Concurrent:
		return "concurrent:" + s.Schedule
	case Overlap:
		return "overlap@" + strconv.Itoa(s.Point)
	}
	return fmt.Sprintf("scenario(%d)", int(s.Kind))
}

// Describe says in words what the queue did.
func (s Scenario) Describe(label string) string {
	switch s.Kind {
	case Once:
		return "the reference run (one clean delivery)"
	case Sequential:
		return "sequential: the ack was lost and the same job was delivered again"
	case CrashBefore:
		d := fmt.Sprintf("crash before point %d of %d", s.Point, s.Of)
		if label != "" {
			d += " (" + label + ")"
		}
		return d + ", then redelivery"
	case CrashAfterLast:
		return fmt.Sprintf("crash after the last point (%d of %d), before the ack, then redelivery", s.Of, s.Of)
	case DuplicateEnqueue:
		return "duplicate enqueue: the producer enqueued the same payload twice, under two job IDs"
	case CrashAfterApply:
		return fmt.Sprintf("crash after point %d of %d was applied (%s), before the job heard back, then redelivery", s.Point, s.Of, label)
	case ReplyLost:
		return fmt.Sprintf("reply lost at point %d of %d (%s): applied, but the job saw a timeout", s.Point, s.Of, label)
	case LateRedriveScenario:
		return fmt.Sprintf("late redrive: crash after point %d of %d was applied (%s), redriven after %s", s.Point, s.Of, label, shortDuration(s.After))
	case Concurrent, Overlap:
		return describeConcurrent(s)
	}
	return s.Token()
}

// plan lists the scenarios for a reference run with these points. Under
// the quick and default budgets a long job's crash points are thinned (see
// keepPoints); crashes records how many were kept.
func plan(steps []faults.Step, cfg *config, crashes *leftOut) ([]Scenario, error) {
	n := len(steps)
	all := []Scenario{{Kind: Sequential, Of: n}}
	crashPoints := keepPoints(steps, n, 0)
	if cfg.only == "" {
		b, err := cfg.conc.resolveBudget()
		if err != nil {
			return nil, err
		}
		if caps, ok := capsFor(b); ok {
			crashPoints = keepPoints(steps, n, caps.crashes)
		}
		crashes.budget = b.Name
	}
	crashes.crashes, crashes.crashPoints = len(crashPoints), n
	for _, i := range crashPoints {
		all = append(all, Scenario{Kind: CrashBefore, Point: i, Of: n})
	}
	all = append(all, Scenario{Kind: CrashAfterLast, Of: n})
	if cfg.dupEnqueueOff == "" {
		all = append(all, Scenario{Kind: DuplicateEnqueue, Of: n})
	}
	for _, s := range steps {
		if s.Kind != faults.Effect {
			continue
		}
		all = append(all,
			Scenario{Kind: CrashAfterApply, Point: s.Index, Of: n},
			Scenario{Kind: ReplyLost, Point: s.Index, Of: n})
		for _, d := range cfg.redrives {
			all = append(all, Scenario{Kind: LateRedriveScenario, Point: s.Index, Of: n, After: d})
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
	return nil, fmt.Errorf("twice: no scenario %q for this job (its reference run has %d points); the scenarios are: %s", cfg.only, n, strings.Join(tokens, ", "))
}

// isConcurrentToken tells the tokens of concurrent scenarios ("concurrent:…",
// "overlap@…") from the sequential ones.
func isConcurrentToken(t string) bool {
	return strings.HasPrefix(t, "concurrent:") || strings.HasPrefix(t, "overlap@")
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
