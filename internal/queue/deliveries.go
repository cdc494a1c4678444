package queue

import "github.com/twicekit/twicekit/faults"

// Reference plays the reference run: one clean delivery of the checked job
// and, while it snoozes (SnoozeError), the deliveries that follow, until
// one does not snooze or maxDeliveries snoozed. Their points are numbered
// across the deliveries, as a scenario's faults count them: deliver runs
// one delivery whose points number on from offset, records it, and returns
// its facts.
func (q Config) Reference(maxDeliveries int, deliver func(offset int) Attempt) {
	offset := 0
	for i := 0; i < maxDeliveries; i++ {
		a := deliver(offset)
		if a.Panic != "" || a.Goexit != "" || a.Hung || !q.Snoozed(a) {
			return
		}
		offset += len(a.Points)
	}
}

// ReferencePoints are the points of the reference run's attempts of job,
// numbered across its deliveries.
func ReferencePoints(attempts []Attempt, job string) []faults.Step {
	var out []faults.Step
	for _, a := range attempts {
		if a.JobID == job {
			out = append(out, a.Points...)
		}
	}
	return out
}

// LastDelivery is the index of the delivery of job that ended the job in a
// clean run: the last of its deliveries (those before it snoozed), before
// any next scheduled run (periodic.go); -1 when there is none.
func LastDelivery(attempts []Attempt, job string) int {
	last := -1
	for i, a := range attempts {
		if a.JobID == job {
			last = i
		}
	}
	return last
}

// SameDeliveries reports whether a second clean run delivered as the first
// did (as many deliveries, and a next scheduled run that succeeded where
// the first had one), so that its values can be compared with the first's.
func SameDeliveries(ref, again []Attempt) bool {
	if len(again) != len(ref) {
		return false
	}
	for _, a := range again {
		if a.JobID == JobNext && a.Err != nil {
			return false
		}
	}
	return true
}
