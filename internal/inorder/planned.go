package inorder

import "sync"

// Played is what a lane made of one planned item: its run and what the
// comparison found (nil: nothing), or why it has none.
type Played[R, F any] struct {
	Run     *R
	Finding *F
	Err     error
	Skipped bool // covered by an earlier item that found nothing
	// OutOfTime: not played, the wall budget had no room left for it.
	OutOfTime bool
	// NotStarted: not played, an earlier item hung or failed.
	NotStarted bool
	done       chan struct{}
}

// NewPlayed makes what PlayAll fills in, one per planned item.
func NewPlayed[R, F any](n int) []*Played[R, F] {
	out := make([]*Played[R, F], n)
	for i := range out {
		out[i] = &Played[R, F]{done: make(chan struct{})}
	}
	return out
}

// Lanes says how PlayAll plays the planned items on lanes of type L.
type Lanes[L, R, F any] struct {
	Lanes []L
	// CoveredBy is, for each item, the index of the earlier item that
	// covers it (-1: none).
	CoveredBy []int
	Room      func() bool                  // whether an item started now fits the wall budget
	Play      func(l L, i int) (*R, error) // plays item i on lane l
	Compare   func(r *R) *F                // what a run found; called one at a time
	Hung      func(r *R) bool              // whether a run's attempt hung
}

// PlayAll plays the planned items that order lists (indexes into out), in
// that order, on the lanes, and fills in out what each made. A lane takes
// the next item in order. An item covered by an earlier one (CoveredBy)
// waits for that one, which order lists earlier or an earlier PlayAll
// played, and is played only if it found something, as a serial loop
// decides. An item the wall budget has no room for is not played
// (OutOfTime). After a hung attempt or an error no later item starts;
// those already started finish and are dropped by the caller, and those
// never started are marked NotStarted.
func (p Lanes[L, R, F]) PlayAll(out []*Played[R, F], order []int) {
	var mu sync.Mutex
	next, stopAt := 0, len(order)
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(order) || next > stopAt {
			return -1
		}
		next++
		return next - 1
	}
	stop := func(at int) {
		mu.Lock()
		stopAt = min(stopAt, at)
		mu.Unlock()
	}
	var compareMu sync.Mutex // the comparison canonicalises the reference: one at a time
	var wg sync.WaitGroup
	for _, l := range p.Lanes {
		wg.Go(func() {
			for at := take(); at >= 0; at = take() {
				i := order[at]
				q := out[i]
				if k := p.CoveredBy[i]; k >= 0 {
					<-out[k].done
					if out[k].OutOfTime { // left out with the one that covers it
						q.OutOfTime = true
						close(q.done)
						continue
					}
					if out[k].Err != nil || out[k].NotStarted || out[k].Finding == nil || p.Hung(out[k].Run) {
						q.Skipped = true
						close(q.done)
						continue
					}
				}
				if !p.Room() {
					q.OutOfTime = true
					close(q.done)
					continue
				}
				q.Run, q.Err = p.Play(l, i)
				if q.Err == nil {
					compareMu.Lock()
					q.Finding = p.Compare(q.Run)
					compareMu.Unlock()
				}
				if q.Err != nil || p.Hung(q.Run) {
					stop(at)
				}
				close(q.done)
				if q.Err != nil || p.Hung(q.Run) {
					return // this lane's worker may still hold the hung attempt
				}
			}
		})
	}
	wg.Wait()
	for _, i := range order[min(next, len(order)):] {
		out[i].NotStarted = true
		close(out[i].done)
	}
}

// Stopped reports whether an item of out that order lists hung or failed
// to play: no later item may start.
func Stopped[R, F any](out []*Played[R, F], order []int, hung func(r *R) bool) bool {
	for _, i := range order {
		if q := out[i]; q.Err != nil || (q.Run != nil && hung(q.Run)) {
			return true
		}
	}
	return false
}
