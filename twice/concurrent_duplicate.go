package twice

import "cmp"

// Concurrent duplicates: a producer that retried an insert that had worked
// leaves two copies of the job, under two job IDs, and a queue that runs
// distinct jobs at once (River, gue, asynq, the generic queue) hands them to
// two workers at the same moment. The check plays them as it plays two
// deliveries of one job at once (concurrent.go), under the lock-aware
// scheduler, job-1 as A and job-2 as B: the named overlaps, budgeted as the
// others are (Budget.OverlapPoints), each with a token of its own
// (duplicate-overlap@N) that replays it.
//
// They play by default where the check does not play two deliveries of one
// job ID at once: a queue that never delivers a job again while it runs
// (River's rescuer, asynq's lease: WithoutOverlappingDeliveries) still runs
// two copies at once. Where it does play them (the generic queue, gue),
// the duplicates' overlaps are the same interleavings under another job ID,
// and the sequential duplicate enqueue already catches a job that tells
// its copies apart by job ID; ConcurrentDuplicates plays them there too.
// WithoutDuplicateEnqueue and WithoutConcurrency switch them off.

// concurrentPair is which two deliveries a family of concurrent scenarios
// runs at once, and its scenario kinds.
type concurrentPair struct {
	overlap, interleaved ScenarioKind
	jobs                 [2]string
	// overlapsOnly: the pair plays its named overlaps, no interleavings.
	overlapsOnly bool
	what         string // its name in errors
}

var (
	sameJob       = concurrentPair{overlap: Overlap, interleaved: Interleaved, jobs: [2]string{job1, job1}, what: "the concurrent scenarios"}
	duplicateJobs = concurrentPair{overlap: DuplicateOverlap, interleaved: DuplicateInterleaved, jobs: [2]string{job1, job2}, overlapsOnly: true, what: "the concurrent duplicates"}
)

// pairOff says why the check does not play a pair's scenarios ("": it
// plays them).
func (c *config) pairOff(p concurrentPair) string {
	if p.overlap == DuplicateOverlap {
		return cmp.Or(c.conc.off, c.dupEnqueueOff)
	}
	return cmp.Or(c.conc.off, c.conc.overlapsOff)
}

// WithoutOverlappingDeliveries switches off the concurrent scenarios of one
// job ID (the overlaps and interleavings of two deliveries of the same
// job), for a queue that never delivers a job again while it runs. Say why;
// the reason is printed with every report. The concurrent duplicates (two
// copies of the job, two job IDs, at once) still play: such a queue runs
// distinct jobs at once all the same.
func WithoutOverlappingDeliveries(reason string) Option {
	return optionFunc(func(c *config) { c.conc.overlapsOff = reason })
}

// ConcurrentDuplicates plays the concurrent duplicates even where the check
// plays two deliveries of one job ID at once (by default they play only
// where WithoutOverlappingDeliveries switched those off): for a job whose
// copies under two job IDs could race where one job ID's redeliveries
// cannot (it locks or records its job ID first, then checks its input).
func ConcurrentDuplicates() Option {
	return optionFunc(func(c *config) { c.conc.duplicates = true })
}

// duplicatesByDefault reports whether the check plays the concurrent
// duplicates without being given a token.
func (c *config) duplicatesByDefault() bool {
	return c.conc.duplicates || c.conc.overlapsOff != ""
}
