package twice

import (
	"fmt"
	"strconv"
	"strings"
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
)

// Scenario is one way a queue delivers the job.
type Scenario struct {
	Kind ScenarioKind
	// Point is the crash point of CrashBefore, and the number of points of
	// the reference run otherwise.
	Point int
	// Of is the number of points of the reference run.
	Of int
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
	}
	return s.Token()
}

// plan lists the scenarios for a reference run of n points.
func plan(n int, cfg *config) ([]Scenario, error) {
	all := []Scenario{{Kind: Sequential, Of: n}}
	for i := 1; i <= n; i++ {
		all = append(all, Scenario{Kind: CrashBefore, Point: i, Of: n})
	}
	all = append(all, Scenario{Kind: CrashAfterLast, Of: n})
	if cfg.dupEnqueueOff == "" {
		all = append(all, Scenario{Kind: DuplicateEnqueue, Of: n})
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
