package twice

import "github.com/twicekit/twicekit/internal/concurrentplay"

// The pairs of deliveries a family of concurrent scenarios runs at once
// (internal/concurrentplay, which says when the concurrent duplicates play).
var sameJob, duplicateJobs = concurrentplay.SameJob, concurrentplay.DuplicateJobs

// WithoutOverlappingDeliveries switches off the concurrent scenarios of one
// job ID (the overlaps and interleavings of two deliveries of the same
// job), for a queue that never delivers a job again while it runs. Say why;
// the reason is printed with every report. The concurrent duplicates (two
// copies of the job, two job IDs, at once) still play: such a queue runs
// distinct jobs at once all the same.
func WithoutOverlappingDeliveries(reason string) Option {
	return optionFunc(func(c *config) { c.Conc.OverlapsOff = reason })
}

// ConcurrentDuplicates plays the concurrent duplicates even where the check
// plays two deliveries of one job ID at once (by default they play only
// where WithoutOverlappingDeliveries switched those off): for a job whose
// copies under two job IDs could race where one job ID's redeliveries
// cannot (it locks or records its job ID first, then checks its input).
func ConcurrentDuplicates() Option {
	return optionFunc(func(c *config) { c.Conc.Duplicates = true })
}
