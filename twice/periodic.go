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
			c.periodic, c.periodicNext = interval, nil
		}
	})
}

// PeriodicSchedule is Periodic for a job whose schedule is not one
// interval (a cron expression, a calendar). next gets a time on the check's
// clock and returns the time of the next scheduled run after it. The check
// plays the next run at next(now) on its clock, where now is the check's
// time when the scenario ended. River's river.PeriodicSchedule has this
// method (Next); twiceriver, twiceasynq and twicetemporal pass their
// schedules here.
func PeriodicSchedule(next func(time.Time) time.Time) Option {
	return optionFunc(func(c *config) {
		if next != nil {
			c.periodic, c.periodicNext = 0, next
		}
	})
}

// periodicOn reports whether the job runs again on a schedule.
func (c *config) periodicOn() bool { return c.periodic > 0 || c.periodicNext != nil }

// nextRun is the time of the next scheduled run after t, on the check's
// clock (t itself when the job is not periodic, or when a schedule gives
// no later time).
func (c *config) nextRun(t time.Time) time.Time {
	switch {
	case c.periodicNext != nil:
		if n := c.periodicNext(t); n.After(t) {
			return n
		}
		return t
	default:
		return t.Add(c.periodic)
	}
}

// playNextRun plays the next scheduled run after a scenario, unless an
// attempt panicked or hung; when it succeeds, the give-ups before it are
// recovered.
func (c *checker) playNextRun(ctx context.Context, sr *ScenarioRun) {
	if !c.cfg.periodicOn() {
		return
	}
	for _, p := range sr.Problems {
		if p.Kind != ProblemGaveUp {
			return
		}
	}
	c.mu.Lock()
	c.clock = c.cfg.nextRun(c.clock)
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
