package twiceasynq

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/twicekit/twicekit/twice"
)

// periodic is the job's Cronspec as twice.PeriodicSchedule, parsed as
// asynq's Scheduler parses it: robfig/cron's standard parser (five fields,
// descriptors such as @every 1h, an optional CRON_TZ= prefix), its times
// in the scheduler's location. It is nil without a Cronspec.
func (job Job) periodic() (twice.Option, error) {
	if job.Cronspec == "" {
		return nil, nil
	}
	sched, err := cron.ParseStandard(job.Cronspec)
	if err != nil {
		return nil, fmt.Errorf("twiceasynq: Job.Cronspec %q is not a cronspec asynq's Scheduler.Register takes: %w", job.Cronspec, err)
	}
	loc := job.SchedulerLocation
	if loc == nil {
		loc = time.UTC // asynq.SchedulerOpts.Location's default
	}
	return twice.PeriodicSchedule(func(t time.Time) time.Time { return sched.Next(t.In(loc)) }), nil
}
