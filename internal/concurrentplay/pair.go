package concurrentplay

import (
	"cmp"

	"github.com/twicekit/twicekit/internal/scenarios"
)

// Concurrent duplicates: a producer that retried an insert that had worked
// leaves two copies of the job, under two job IDs, and a queue that runs
// distinct jobs at once (River, gue, asynq, the generic queue) hands them to
// two workers at the same moment. The check plays them as it plays two
// deliveries of one job at once, under the lock-aware scheduler, job-1 as A
// and job-2 as B: the named overlaps, budgeted as the others are
// (Budget.OverlapPoints), each with a token of its own (duplicate-overlap@N)
// that replays it.
//
// They play by default where the check does not play two deliveries of one
// job ID at once: a queue that never delivers a job again while it runs
// (River's rescuer, asynq's lease: WithoutOverlappingDeliveries) still runs
// two copies at once. Where it does play them (the generic queue, gue),
// the duplicates' overlaps are the same interleavings under another job ID,
// and the sequential duplicate enqueue already catches a job that tells
// its copies apart by job ID; ConcurrentDuplicates plays them there too.
// WithoutDuplicateEnqueue and WithoutConcurrency switch them off.

// Pair is which two deliveries a family of concurrent scenarios runs at
// once.
type Pair struct {
	// Duplicate: the two copies of a duplicate enqueue (the scenario kinds
	// DuplicateOverlap and DuplicateInterleaved), else one job ID delivered
	// twice (Overlap and Interleaved).
	Duplicate bool
	Jobs      [2]string
	// OverlapsOnly: the pair plays its named overlaps, no interleavings.
	OverlapsOnly bool
	What         string // its name in errors
}

// The pairs: one job ID delivered twice, and the two copies of a duplicate
// enqueue.
var (
	SameJob       = Pair{Jobs: [2]string{scenarios.Job1, scenarios.Job1}, What: "the concurrent scenarios"}
	DuplicateJobs = Pair{Duplicate: true, Jobs: [2]string{scenarios.Job1, scenarios.Job2}, OverlapsOnly: true, What: "the concurrent duplicates"}
)

// Kinds is how many kinds of concurrent scenarios the pair plays for a job
// of n concurrent points: its overlaps (when n > 1) and its interleavings
// (unless it plays its overlaps only).
func (p Pair) Kinds(n int) int {
	k := 0
	if n > 1 {
		k++
	}
	if n > 0 && !p.OverlapsOnly {
		k++
	}
	return k
}

// Off is what switched the concurrent scenarios off, from the options.
type Off struct {
	Concurrency    string // WithoutConcurrency
	Overlaps       string // WithoutOverlappingDeliveries
	DuplicateQueue string // WithoutDuplicateEnqueue
	Duplicates     bool   // ConcurrentDuplicates
}

// Pair says why the check does not play a pair's scenarios ("": it
// plays them).
func (o Off) Pair(p Pair) string {
	if p.Duplicate {
		return cmp.Or(o.Concurrency, o.DuplicateQueue)
	}
	return cmp.Or(o.Concurrency, o.Overlaps)
}

// DuplicatesByDefault reports whether the check plays the concurrent
// duplicates without being given a token.
func (o Off) DuplicatesByDefault() bool {
	return o.Duplicates || o.Overlaps != ""
}

// Seed is the scheduler's seed: the one given, else 1.
func Seed(seed uint64) uint64 {
	if seed == 0 {
		return 1
	}
	return seed
}
