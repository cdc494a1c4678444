package twicetemporal

import (
	"errors"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/twicekit/twicekit/twice"
)

// nextRunJobID is twice's job ID of the next scheduled run (twice.Periodic).
const nextRunJobID = "next-run"

// periodic is the activity's Schedule as twice.PeriodicSchedule: the next
// run is the earliest of the spec's intervals' next times (Temporal's
// Epoch + n*Every + Offset), not before StartAt. Jitter only delays a run,
// so it is not played.
func (act Activity) periodic() (twice.Option, error) {
	spec := act.Schedule
	if spec == nil {
		return nil, nil
	}
	switch {
	case len(spec.Calendars) > 0 || len(spec.CronExpressions) > 0 || len(spec.Skip) > 0:
		return nil, errors.New("twicetemporal: Activity.Schedule: only Intervals are read (Calendars, CronExpressions and Skip are evaluated by Temporal's server); give the next run's time yourself with twice.PeriodicSchedule(next)")
	case len(spec.Intervals) == 0:
		return nil, errors.New("twicetemporal: Activity.Schedule has no Intervals: give it one (client.ScheduleIntervalSpec{Every: time.Hour}) or leave Schedule nil")
	}
	for _, iv := range spec.Intervals {
		if iv.Every <= 0 {
			return nil, errors.New("twicetemporal: Activity.Schedule: an interval's Every must be positive, as Temporal's server requires")
		}
	}
	intervals, startAt := spec.Intervals, spec.StartAt
	return twice.PeriodicSchedule(func(t time.Time) time.Time {
		if t.Before(startAt) {
			t = startAt.Add(-time.Nanosecond)
		}
		var next time.Time
		for _, iv := range intervals {
			if n := intervalNext(t, iv); next.IsZero() || n.Before(next) {
				next = n
			}
		}
		return next
	}), nil
}

// intervalNext is the first time after t of the form Epoch + n*Every +
// Offset (Temporal's ScheduleIntervalSpec).
func intervalNext(t time.Time, iv client.ScheduleIntervalSpec) time.Time {
	base := time.Unix(0, 0).UTC().Add(iv.Offset)
	k := t.Sub(base) / iv.Every
	next := base.Add(k * iv.Every)
	for !next.After(t) {
		next = next.Add(iv.Every)
	}
	for next.Add(-iv.Every).After(t) {
		next = next.Add(-iv.Every)
	}
	return next
}

// scheduledWorkflowID is the ID of the workflow a Schedule starts at t:
// Temporal appends the scheduled time to the action's workflow ID.
func scheduledWorkflowID(id string, t time.Time) string {
	return id + "-" + t.UTC().Format(time.RFC3339)
}
