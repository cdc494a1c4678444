package twice

import (
	"context"
	"time"

	"github.com/twicekit/twicekit/internal/queue"
)

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
			c.Periodic = queue.Schedule{Every: interval}
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
			c.Periodic = queue.Schedule{Next: next}
		}
	})
}

// playNextRun plays the next scheduled run after a scenario, unless an
// attempt panicked or hung; when it succeeds, the give-ups before it are
// recovered.
func (c *checker) playNextRun(ctx context.Context, sr *ScenarioRun) {
	if !c.cfg.Periodic.On() || !gaveUpOnly(sr) {
		return
	}
	before := len(sr.Problems)
	if c.cfg.Periodic.PlayNext(&c.Mu, &c.Clock, func(jobID string) bool { return c.deliver(ctx, sr, jobID, delivery{}) }) {
		sr.Problems = sr.Problems[before:] // the next run recovered what the queue gave up on
	}
}
