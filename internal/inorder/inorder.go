// Package inorder plays numbered items on lanes at once and folds their
// outcomes in order, as a serial loop would see them (Play). twice's lanes
// are its checkers, each on a database of its own; the items are the
// overlaps and the sampled interleavings.
//
// It plays a check's planned sequential scenarios on the lanes in plan
// order, and keeps what each made (planned.go). A covered one waits for
// the one covering it and plays only if that one found something. None
// starts past a hang, an error or the end of the wall budget.
//
// It says how many lanes a check plays on, from the option or the setting
// (count.go). It makes the lanes, fewer when there is no room for more, on
// a goroutine of its own while the check goes on, and hands over the
// extra ones once waited for (start.go). twice keeps the option (Parallel)
// and how one lane is made; internal/settings reads the setting
// (-twice.parallel, else TWICE_PARALLEL).
//
// Scenarios in parallel, as twice plays them: a check plays its reference
// runs on its own database, then its other scenarios on lanes: the check's
// own database and workers, and up to N-1 more, each a clone of the same
// template with its own workers, effect log, clock and provider. Lanes take
// the scenarios in plan order and the report takes them in plan order,
// never in the order they finish, so the report is the same whatever N is.
// The overlaps and the sampled interleavings play on the lanes too
// (internal/explore); an enumeration of every interleaving stays on the
// check's own database, one after another: it picks the next interleaving
// from the last one.
package inorder

import "sync"

// Play plays items 0..n-1 on the lanes, each lane taking the next item
// in order, and folds each outcome in order, as soon as it and every
// earlier one are in: the fold sees what a serial loop would see. When fold
// returns false, no later item starts, and the outcomes of those already
// started are dropped. It returns once every lane is idle.
func Play[L, T any](lanes []L, n int, play func(l L, i int) (T, error), fold func(i int, v T, err error) bool) {
	type outcome struct {
		v   T
		err error
	}
	results := make([]outcome, n)
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	var mu sync.Mutex
	next, stopped := 0, false
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		if stopped || next >= n {
			return -1
		}
		next++
		return next - 1
	}
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Go(func() {
			for i := take(); i >= 0; i = take() {
				v, err := play(l, i)
				results[i] = outcome{v, err}
				close(done[i])
			}
		})
	}
	for i := range n {
		<-done[i]
		if !fold(i, results[i].v, results[i].err) {
			break
		}
	}
	mu.Lock()
	stopped = true
	mu.Unlock()
	wg.Wait()
}
