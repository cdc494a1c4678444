package sched

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Decision is what a [Chooser] sees when the scheduler is about to release
// one attempt.
type Decision struct {
	// N counts the releases made so far in this run.
	N int
	// Ready lists the attempts waiting at a point, in ascending order; it is
	// never empty. Attempts blocked on a lock or returned are not in it.
	Ready []int
	// Released counts, per attempt, the points released so far.
	Released []int
}

// IsReady reports whether attempt i is waiting at a point.
func (d Decision) IsReady(i int) bool { return slices.Contains(d.Ready, i) }

// Chooser picks the attempt to release; the scheduler falls back to Ready[0]
// when it picks an attempt that is not ready. A chooser must be a
// deterministic function of the decisions it is shown.
type Chooser interface {
	Choose(d Decision) int
}

// Overlap is the visibility-timeout scenario as a [Chooser]: attempt A runs
// until it has passed K points and pauses there, the others run to the end,
// then A resumes. When the others cannot go on (blocked on a lock A holds),
// A goes.
type Overlap struct{ K int }

// Choose implements [Chooser].
func (o Overlap) Choose(d Decision) int {
	if d.Released[0] < o.K && d.IsReady(0) {
		return 0
	}
	for _, i := range d.Ready {
		if i != 0 {
			return i
		}
	}
	return d.Ready[0]
}

// PCT is a randomized scheduler after Burckhardt et al.'s probabilistic
// concurrency testing: every attempt gets a distinct random priority, the
// ready attempt with the highest priority goes, and at Depth−1 random release
// numbers (the change points) the attempt about to go drops below all others.
// A bug that needs d ordering constraints is found by one sample with
// probability at least 1/(n·k^(d−1)) for n attempts and k releases.
type PCT struct {
	prio   []int
	change map[int]int // release number -> new (low) priority
}

// NewPCT draws a PCT schedule for attempts attempts and about steps releases
// with depth d (2 or 3 are the useful values), from seed and sample. The same
// arguments always give the same schedule.
func NewPCT(seed, sample uint64, attempts, steps, depth int) *PCT {
	r := rand.New(rand.NewPCG(seed, sample))
	if depth < 1 {
		depth = 1
	}
	p := &PCT{prio: make([]int, attempts), change: map[int]int{}}
	for i, v := range r.Perm(attempts) {
		p.prio[i] = depth + v // above every change-point priority
	}
	if steps > 1 {
		points := r.Perm(steps - 1)
		for j := 0; j < depth-1 && j < len(points); j++ {
			p.change[points[j]+1] = depth - 2 - j // later change points go lower
		}
	}
	return p
}

// Key identifies the schedule the sample will make: samples with equal
// keys make the same choices, so [Explore] runs only one of them.
func (p *PCT) Key() string {
	changes := make([]int, 0, len(p.change))
	for n := range p.change {
		changes = append(changes, n)
	}
	slices.Sort(changes)
	key := fmt.Sprint(p.prio)
	for _, n := range changes {
		key += fmt.Sprintf(" %d:%d", n, p.change[n])
	}
	return key
}

// Choose implements [Chooser].
func (p *PCT) Choose(d Decision) int {
	best := p.highest(d.Ready)
	if low, ok := p.change[d.N]; ok {
		p.prio[best] = low
		delete(p.change, d.N)
		best = p.highest(d.Ready)
	}
	return best
}

func (p *PCT) highest(ready []int) int {
	best := ready[0]
	for _, i := range ready {
		if i < len(p.prio) && p.prio[i] > p.prio[best] {
			best = i
		}
	}
	return best
}

// Exhaustive enumerates every distinct interleaving, depth first and in
// lexicographic order of the choices (A before B): run the scenario with
// [Exhaustive.Next], feed the run's trace to [Exhaustive.Record], repeat
// while Record reports more. Only decisions with more than one ready attempt
// branch, so interleavings that lock waits make impossible are never tried,
// and none is run twice.
type Exhaustive struct {
	next Replay
	done bool
}

// Next is the schedule of the next run (nil after the last).
func (e *Exhaustive) Next() Replay {
	if e.done {
		return nil
	}
	return append(Replay{}, e.next...)
}

// Record notes the decisions of a run and reports whether another
// interleaving remains.
func (e *Exhaustive) Record(t *Trace) bool {
	ds := t.Decisions
	for j := len(ds) - 1; j >= 0; j-- {
		k := slices.Index(ds[j].Ready, ds[j].Chose)
		if k >= 0 && k+1 < len(ds[j].Ready) {
			next := make(Replay, 0, j+1)
			for _, d := range ds[:j] {
				next = append(next, d.Chose)
			}
			e.next = append(next, ds[j].Ready[k+1])
			return true
		}
	}
	e.done = true
	return false
}
