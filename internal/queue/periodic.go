package queue

import (
	"sync"
	"time"
)

// Periodic jobs: a job that also runs again on a schedule (a cron loop,
// River's periodic jobs, asynq's periodic tasks, a Temporal Schedule) has a
// retry the queue does not make: the next scheduled run, with the same
// input and a new job ID. An outbox publisher with no retries of its own
// ("the next run picks up what is still pending") is recovered by it.

// JobNext is the job ID of the next scheduled run.
const JobNext = "next-run"

// Schedule is a periodic job's schedule: an interval (Periodic) or the
// next run's time after a time (PeriodicSchedule); zero when the job is not
// periodic.
type Schedule struct {
	Every time.Duration
	Next  func(time.Time) time.Time
}

// On reports whether the job runs again on a schedule.
func (s Schedule) On() bool { return s.Every > 0 || s.Next != nil }

// NextRun is the time of the next scheduled run after t, on the check's
// clock (t itself when the job is not periodic, or when a schedule gives
// no later time).
func (s Schedule) NextRun(t time.Time) time.Time {
	switch {
	case s.Next != nil:
		if n := s.Next(t); n.After(t) {
			return n
		}
		return t
	default:
		return t.Add(s.Every)
	}
}

// HasNextRun reports whether a scenario with attempts played the next
// scheduled run.
func HasNextRun(attempts []Attempt) bool {
	for _, a := range attempts {
		if a.JobID == JobNext {
			return true
		}
	}
	return false
}

// PlayNext plays the next scheduled run after a scenario: the check's
// clock (guarded by mu) moves on to the run's time, then deliver delivers
// JobNext. It reports whether the run ended acknowledged: then the
// give-ups before it are recovered (the next run is their retry).
func (s Schedule) PlayNext(mu sync.Locker, clock *time.Time, deliver func(jobID string) bool) bool {
	mu.Lock()
	*clock = s.NextRun(*clock)
	mu.Unlock()
	return deliver(JobNext)
}
