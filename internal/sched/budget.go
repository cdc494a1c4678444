package sched

import (
	"github.com/twicekit/twicekit/concurrent"

	"errors"
	"fmt"
)

// Budget bounds how many schedules a check explores per job.
type Budget struct {
	// Name is how -twice.budget and TWICE_BUDGET spell it.
	Name string
	// Runs is the most schedules run (named ones such as overlap@k aside).
	Runs int
	// Depth is the PCT depth d used when sampling (d−1 change points).
	Depth int
}

// Interleavings counts the interleavings of attempts with these numbers of
// points (concurrent.Interleavings).
func Interleavings(points ...int) int64 { return concurrent.Interleavings(points...) }

// Stop, returned by the function [Explore] calls, ends the exploration
// without an error (for example at the first interleaving that breaks a
// promise).
var Stop = errors.New("concurrent: stop exploring")

// Strategy says how [Explore] covers the interleavings.
type Strategy int

// The strategies.
const (
	// Enumerate runs every distinct interleaving, depth first.
	Enumerate Strategy = iota + 1
	// Sample runs seeded PCT samples.
	Sample
)

func (s Strategy) String() string {
	switch s {
	case Enumerate:
		return "every interleaving"
	case Sample:
		return "PCT samples"
	}
	return fmt.Sprintf("strategy(%d)", int(s))
}

// Choose picks the strategy for attempts with these numbers of points:
// enumeration when their interleavings fit the budget, sampling otherwise.
func (b Budget) Choose(points ...int) Strategy {
	if Interleavings(points...) <= int64(b.Runs) {
		return Enumerate
	}
	return Sample
}

// Explore runs schedules for attempts with these numbers of points (taken
// from a reference run; a run may reach more or fewer) within the budget:
// every distinct interleaving when [Budget.Choose] says Enumerate, else up
// to b.Runs distinct PCT samples drawn from seed (fewer once they stop
// finding new interleavings). run plays one schedule and returns its
// trace; returning [Stop] ends the exploration early, any other error aborts
// it. Explore returns how many schedules it ran.
func Explore(b Budget, seed uint64, points []int, run func(Chooser) (*Trace, error)) (int, error) {
	if b.Runs < 1 {
		return 0, fmt.Errorf("concurrent: budget %q runs no schedules", b.Name)
	}
	runs := 0
	if b.Choose(points...) == Enumerate {
		var e Exhaustive
		for runs < b.Runs {
			runs++
			t, err := run(e.Next())
			if err != nil {
				return runs, stopped(err)
			}
			if !e.Record(t) {
				break
			}
		}
		return runs, nil
	}
	sm, draws := NewSampler(b, seed, points)
	for _, p := range draws {
		runs++
		t, err := run(p)
		if err != nil {
			return runs, stopped(err)
		}
		if !sm.Next(t) {
			break
		}
	}
	return runs, nil
}

// Sampler is the sampled exploration of [Explore] in two halves, for a
// caller that plays several samples at once and folds their traces in
// order: the draws to play, in order, and after each one's trace whether
// Explore would play the next.
type Sampler struct {
	b     Budget
	runs  int
	stale int
	found map[string]bool
}

// NewSampler returns the sampler and the PCT samples Explore plays, in
// order. Samples that would repeat an earlier one's choices are skipped;
// the draws are bounded too, for jobs with few distinct samples. The caller
// plays them in order until Next says stop.
func NewSampler(b Budget, seed uint64, points []int) (*Sampler, []Chooser) {
	steps := 0
	for _, p := range points {
		steps += p
	}
	drawn := map[string]bool{}
	var draws []Chooser
	for draw := uint64(0); draw < 10*uint64(max(b.Runs, 0)); draw++ {
		p := NewPCT(seed, draw, len(points), steps, b.Depth)
		if drawn[p.Key()] {
			continue
		}
		drawn[p.Key()] = true
		draws = append(draws, p)
	}
	return &Sampler{b: b, found: map[string]bool{}}, draws
}

// Next takes the trace of the sample just played (nil when it gave none)
// and reports whether the next sample is to be played: the budget's runs
// are not spent, and the last quarter of the budget (8 at least) in a row
// brought some interleaving not seen before (the samples have not
// saturated).
func (s *Sampler) Next(t *Trace) bool {
	s.runs++
	if t != nil && !s.found[t.Token()] {
		s.found[t.Token()] = true
		s.stale = 0
	} else {
		s.stale++
	}
	return s.runs < s.b.Runs && s.stale < max(8, s.b.Runs/4)
}

func stopped(err error) error {
	if errors.Is(err, Stop) {
		return nil
	}
	return err
}
