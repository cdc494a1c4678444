package twice

import (
	"context"
	"time"
)

// Periodic jobs: a job that also runs again on a schedule (a cron loop,
// River's periodic jobs, asynq's periodic tasks, a Temporal Schedule) has a
// retry the queue does not make: the next scheduled run, with the same
// input and a new job ID. An outbox publisher with no retries of its own
// ("the next run picks up what is still pending") is recovered by it.

// jobNext is the job ID of the next scheduled run.
const jobNext = "next-run"

// Periodic declares that the job also runs again every interval on a
// schedule, with the same input and a new job ID. After the reference run
// and after every scenario the check then plays the next scheduled run, on
// the check's clock interval later (never slept), and compares the world
// after it. A delivery the queue gave up on (MaxDeliveries) is no finding
// when the next run succeeds: the next run is its retry. What the next run
// does twice (an event published again without a key) is a finding, whose
// headline says "then the next scheduled run".
func Periodic(interval time.Duration) Option {
	return optionFunc(func(c *config) {
		if interval > 0 {
			c.periodic = interval
		}
	})
}

// playNextRun plays the next scheduled run after a scenario, unless an
// attempt panicked or hung; when it succeeds, the give-ups before it are
// recovered.
func (c *checker) playNextRun(ctx context.Context, sr *ScenarioRun) {
	if c.cfg.periodic <= 0 {
		return
	}
	for _, p := range sr.Problems {
		if p.Kind != ProblemGaveUp {
			return
		}
	}
	c.mu.Lock()
	c.clock = c.clock.Add(c.cfg.periodic)
	c.mu.Unlock()
	before := len(sr.Problems)
	if !c.deliver(ctx, sr, jobNext, delivery{}) {
		return
	}
	sr.Problems = sr.Problems[before:] // the next run recovered what the queue gave up on
}

// hasNextRun reports whether the scenario played the next scheduled run.
func (sr *ScenarioRun) hasNextRun() bool {
	for _, a := range sr.Attempts {
		if a.JobID == jobNext {
			return true
		}
	}
	return false
}
